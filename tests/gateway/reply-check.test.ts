import express from "express";
import supertest from "supertest";
import { z } from "zod";
import { createLogger } from "@trendgate/logger";
import { problemHandler } from "../../apps/gateway/src/http/problem.ts";
import { checkedReply, defineRoute, replyProblems, strictReplies, type RouteDef } from "../../apps/gateway/src/http/route.ts";
import { mountRoutes } from "../../apps/gateway/src/http/router.ts";
import { allRoutes } from "../../apps/gateway/src/routes/index.ts";
import type { GatewayDeps } from "../../apps/gateway/src/deps.ts";

// Replies are held to the response schemas the OpenAPI document publishes: in tests the router turns a 2xx reply
// with an undeclared field (or a value its schema refuses) into a failure naming it, for the strict route groups
// (the ads connectors, executor plans and reporting; REPLY_CHECK=all for every route), so every test of those
// routes also checks what they answer.

const Plan = z.object({ id: z.string(), changes: z.array(z.object({ op: z.enum(["add", "remove"]), item: z.string() })), note: z.string().nullable() });
const route = (tag: string, body: unknown, status = 200): RouteDef => defineRoute({
  method: "get", path: "/x", operationId: "getX", summary: "x", tag, auth: "public",
  responses: { 200: { description: "x", schema: Plan }, 202: { description: "queued" } },
  handler: () => ({ status, body }),
});
const ok = { id: "p1", changes: [{ op: "add", item: "robots" }], note: null };

test("a reply with exactly the declared fields passes; an undeclared field at any depth is named", () => {
  expect(replyProblems(route("Ads connectors", ok), { status: 200, body: ok })).toEqual([]);
  expect(replyProblems(route("Ads connectors", ok), { status: 200, body: { ...ok, secret: "x" } })).toEqual(["secret: not declared in the response schema"]);
  const nested = { ...ok, changes: [{ op: "add", item: "robots" }, { op: "remove", item: "drones", resource: "r/9" }] };
  expect(replyProblems(route("Ads connectors", nested), { status: 200, body: nested })).toEqual(["changes.1.resource: not declared in the response schema"]);
});

test("a value the schema refuses is named; what JSON does not send (undefined) is not a field", () => {
  expect(replyProblems(route("Ads connectors", ok), { status: 200, body: { ...ok, note: 5 } })).toEqual([expect.stringMatching(/^note: /)]);
  expect(replyProblems(route("Ads connectors", ok), { status: 200, body: { ...ok, extra: undefined } })).toEqual([]);
});

test("statuses without a schema, and non-2xx answers, are not checked", () => {
  expect(replyProblems(route("Ads connectors", ok), { status: 202, body: { anything: 1 } })).toEqual([]);
  expect(replyProblems(route("Ads connectors", ok), { status: 204 })).toEqual([]);
});

test("the ads and reporting groups are strict; another group's off-schema reply is reported, not failed", () => {
  const warned: string[][] = [];
  expect(strictReplies(route("Ads reporting", ok))).toBe(true);
  expect(() => checkedReply(route("Ads executor", ok), { status: 200, body: { ...ok, secret: "x" } }, (p) => warned.push(p))).toThrow(/getX answered 200 off its declared schema: secret/);
  const other = route("Keys", ok);
  expect(strictReplies(other)).toBe(process.env.REPLY_CHECK === "all");
  if (!strictReplies(other)) {
    expect(checkedReply(other, { status: 200, body: { ...ok, secret: "x" } }, (p) => warned.push(p)).status).toBe(200);
    expect(warned).toEqual([["secret: not declared in the response schema"]]);
  }
});

test("through the router, a strict route's undeclared field fails the request (500) instead of reaching the client", async () => {
  const app = express();
  const deps = { config: { BODY_LIMIT_BYTES: 1000 }, logger: createLogger({ level: "silent" }) } as unknown as GatewayDeps;
  mountRoutes(app, [route("Ads connectors", { ...ok, secret: "x" })], deps, { auth: {} as never, rateLimits: {} as never });
  app.use(problemHandler(deps.logger));
  const res = await supertest(app).get("/x");
  expect(res.status).toBe(500);
  expect(res.body).not.toHaveProperty("secret");
});

test("every route documents what its 2xx answers carry: a JSON schema the router can check, or the media types it sends", () => {
  const undocumented = allRoutes.filter((r) => !r.raw).flatMap((r) => Object.entries(r.responses)
    .filter(([status, spec]) => Number(status) >= 200 && Number(status) <= 299 && Number(status) !== 204 && !spec.schema && !spec.content)
    .map(([status]) => `${r.operationId} ${status}`));
  expect(undocumented).toEqual([]);
});
