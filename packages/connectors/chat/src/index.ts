export * from "./kind.ts";
export { slack } from "./slack/index.ts";
export { teams, parseTeamsMention } from "./teams/index.ts";
