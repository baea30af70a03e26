// Who changed an item, as its history and the API show it.

/** `key:<api key id>`. */
export const keyActor = (keyId: string) => `key:${keyId}`;
/** Who acted through the API: `key:<key id>`, or `console:<session id>` for a person in the web console. */
export const credentialActor = (c: { kind: "apiKey" | "consoleSession"; id: string }) => (c.kind === "apiKey" ? keyActor(c.id) : `console:${c.id}`);
/** A person pressing a chat card's button: `chat:<workspace or tenant>/<user>`. */
export const chatActor = (teamId: string, userId: string) => `chat:${teamId}/${userId}`;
export const SYSTEM_ACTOR = "system";
