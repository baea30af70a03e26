import { Parser } from "@asyncapi/parser";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { z } from "zod";
import {
  ACCOUNT_EVENT_DATA, ACCOUNT_EVENT_SCHEMAS, ACCOUNT_EVENT_TYPES, accountEventSchemaName, exampleOperationalEvent, OPERATIONAL_EVENT_TYPES, OperationalPayload,
  TREND_EVENT_TYPES, TrendEvent, WEBHOOK_EVENT_TYPES, WebhookPayload,
} from "@trendgate/contracts";
import { waitFor } from "../helpers/config.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startStack, trendEvent, webhookBody, type Stack } from "../helpers/stack.ts";

// The published event catalog (GET /asyncapi.json, GET /docs/events): a valid AsyncAPI 3 document, generated from the
// zod contracts (so the two cannot differ), whose schemas every delivered event satisfies.

let stack: Stack;
let rx: Receiver;
let doc: any;
beforeAll(async () => {
  stack = await startStack();
  rx = await startReceiver();
  const res = await stack.gw.http.get("/asyncapi.json");
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(async () => { await stack.close(); await rx.close(); });

/** A validator for the schema at a JSON pointer of the document ("#/components/..."), references resolved in it. */
function validatorAt(pointer: string) {
  const ajv = new Ajv({ strict: false, allErrors: true }); // strict: the document's AsyncAPI keywords are not JSON Schema
  addFormats(ajv); // date-time, uri: checked, not ignored
  ajv.addSchema(doc, "asyncapi");
  const v = ajv.getSchema(`asyncapi${pointer}`);
  if (!v) throw new Error(`no schema at ${pointer}`);
  return v;
}
const pointerOf = (key: string, part: "payload" | "headers") => `#/components/messages/${key.replace(/~/g, "~0").replace(/\//g, "~1")}/${part}`;

test("GET /asyncapi.json is a valid AsyncAPI 3.0 document (the AsyncAPI parser finds no error)", async () => {
  expect(doc.asyncapi).toBe("3.0.0");
  const { document, diagnostics } = await new Parser().parse(JSON.stringify(doc));
  expect(diagnostics.filter((d) => d.severity === 0).map((d) => `${d.path.join(".")}: ${d.message}`)).toEqual([]);
  expect(document).toBeDefined();
});

test("every event type is in the catalog on each channel, with the schemas the contracts generate", () => {
  const generated = (s: z.ZodType, name: string) => (z.toJSONSchema(s, { target: "draft-7" }) as any).definitions[name];
  const relinked = (v: unknown) => JSON.parse(JSON.stringify(v).replaceAll("#/definitions/", "#/components/schemas/"));
  for (const [channel, types] of [["webhook", WEBHOOK_EVENT_TYPES], ["stream", TREND_EVENT_TYPES], ["workflow", TREND_EVENT_TYPES]] as const) {
    const names = Object.keys(doc.channels[channel].messages).map((k) => doc.components.messages[k].name);
    expect({ channel, names }).toEqual({ channel, names: [...types] });
  }
  // Each operational event's message carries its own type's schema, its data typed (no shared untyped `data`).
  for (const type of OPERATIONAL_EVENT_TYPES) {
    const name = accountEventSchemaName(type);
    expect({ type, payload: doc.components.messages[`webhook.${type}`].payload }).toEqual({ type, payload: { $ref: `#/components/schemas/${name}Event` } });
    expect(doc.components.schemas[`${name}Event`]).toEqual(relinked(generated(ACCOUNT_EVENT_SCHEMAS[type], `${name}Event`)));
    expect(doc.components.schemas[`${name}Event`].properties.data).toEqual({ $ref: `#/components/schemas/${name}Data` });
    expect(doc.components.schemas[`${name}Data`]).toEqual(relinked(generated(ACCOUNT_EVENT_SCHEMAS[type], `${name}Data`)));
  }
  // The same JSON Schema zod makes of the contracts: a change to a contract changes the catalog with it.
  expect(doc.components.schemas.WebhookPayload).toEqual(relinked(generated(WebhookPayload, "WebhookPayload")));
  expect(doc.components.schemas.TrendEvent).toEqual(relinked(generated(TrendEvent, "TrendEvent")));
  // Each example satisfies its own message's schema.
  for (const [key, m] of Object.entries<any>(doc.components.messages)) {
    const v = validatorAt(pointerOf(key, "payload"));
    expect({ key, ok: v(m.examples[0].payload), errors: v.errors ?? null }).toEqual({ key, ok: true, errors: null });
  }
});

/** Where a JSON Schema leaves something untyped: a node that accepts anything, or an object open to any other field. */
function untyped(schema: unknown, at = "data"): string[] {
  if (!schema || typeof schema !== "object") return [];
  const s = schema as Record<string, any>;
  const keys = Object.keys(s).filter((k) => !["description", "example", "examples", "title", "default"].includes(k));
  if (!keys.length) return [`${at}: accepts anything`];
  const out: string[] = [];
  if (s.type === "object" || s.properties) {
    const extra = s.additionalProperties;
    if (extra === undefined || extra === true || (typeof extra === "object" && untyped(extra, `${at}.*`).length)) out.push(`${at}: open to other fields`);
    else if (typeof extra === "object") out.push(...untyped(extra, `${at}.*`));
  }
  for (const [k, v] of Object.entries<any>(s.properties ?? {})) out.push(...untyped(v, `${at}.${k}`));
  for (const k of ["items", "not"]) if (s[k]) out.push(...untyped(s[k], `${at}[]`));
  for (const k of ["anyOf", "oneOf", "allOf"]) for (const v of s[k] ?? []) out.push(...untyped(v, at));
  return out;
}

test("every event type has its own typed data schema, and each catalog example is exactly that schema", () => {
  // Every operational event of the vocabulary (what subscriptions list) is an account event with a schema of its own.
  expect(OPERATIONAL_EVENT_TYPES.filter((t) => !ACCOUNT_EVENT_TYPES.includes(t))).toEqual([]);
  for (const type of ACCOUNT_EVENT_TYPES) {
    const js = z.toJSONSchema(ACCOUNT_EVENT_DATA[type], { target: "draft-7" });
    expect({ type, untyped: untyped(js) }).toEqual({ type, untyped: [] });
  }
  // The untyped shape the catalog published before is refused: data is closed.
  expect(untyped({ type: "object", additionalProperties: {} })).toEqual(["data: open to other fields"]);
  for (const type of OPERATIONAL_EVENT_TYPES) {
    const example = exampleOperationalEvent(type);
    const parsed = ACCOUNT_EVENT_SCHEMAS[type].safeParse(example);
    expect({ type, issues: parsed.error?.issues ?? [] }).toEqual({ type, issues: [] });
    expect(OperationalPayload.parse(example)).toEqual(example);
    // One field more, or one missing, is not that type's event.
    expect(ACCOUNT_EVENT_SCHEMAS[type].safeParse({ ...example, data: { ...example.data, surprise: 1 } }).success).toBe(false);
    const [first] = Object.keys(example.data);
    const { [first]: _gone, ...missing } = example.data as Record<string, unknown>;
    expect({ type, first, ok: ACCOUNT_EVENT_SCHEMAS[type].safeParse({ ...example, data: missing }).success }).toEqual({ type, first, ok: false });
  }
});

test("the OpenAPI document's webhooks publish each event type's body schema and example", async () => {
  const api = (await stack.gw.http.get("/openapi.json")).body;
  expect(Object.keys(api.webhooks)).toEqual([...WEBHOOK_EVENT_TYPES]);
  for (const type of OPERATIONAL_EVENT_TYPES) {
    const body = api.webhooks[type].post.requestBody.content["application/json"];
    const name = accountEventSchemaName(type);
    expect({ type, schema: body.schema }).toEqual({ type, schema: { $ref: `#/components/schemas/${name}Event` } });
    expect(api.components.schemas[`${name}Data`].additionalProperties).toBe(false);
    expect(ACCOUNT_EVENT_SCHEMAS[type].safeParse(body.example).success).toBe(true);
  }
  for (const type of TREND_EVENT_TYPES) {
    const body = api.webhooks[type].post.requestBody.content["application/json"];
    expect(body.schema).toEqual({ $ref: "#/components/schemas/WebhookPayload" });
    expect(WebhookPayload.safeParse(body.example).success).toBe(true);
  }
});

test("every delivered event matches the catalog: its body and its headers, for each type", async () => {
  const a = await stack.gw.account();
  const res = await stack.gw.http.post("/api/integrations/webhooks").set(a.auth)
    .send(webhookBody(rx.url("/catalog"), { trigger_type: "event_types", event_types: [...TREND_EVENT_TYPES], threshold_value: 0, cooldown_seconds: 0 }));
  expect(res.status).toBe(201);
  for (const type of TREND_EVENT_TYPES) {
    await stack.publish(trendEvent(a.accountId, { type, trend_id: "trend_catalog", ...(type === "trend.detected" ? { previous_severity: null, previous_velocity: null } : {}) }));
  }
  const got = await waitFor(async () => rx.on("/catalog").length === TREND_EVENT_TYPES.length && rx.on("/catalog"), { timeoutMs: 15_000 });
  for (const d of got) {
    const type = String(d.headers["x-webhook-event-type"]);
    const key = `webhook.${type}`;
    expect(doc.components.messages[key]).toBeDefined();
    const body = validatorAt(pointerOf(key, "payload"));
    expect({ type, ok: body(JSON.parse(d.body)), errors: body.errors ?? null }).toEqual({ type, ok: true, errors: null });
    // Header names as the catalog spells them, values as received.
    const named = doc.components.messages[key].headers.properties as Record<string, unknown>;
    const headers = Object.fromEntries(Object.keys(named).filter((h) => d.headers[h.toLowerCase()] !== undefined).map((h) => [h, String(d.headers[h.toLowerCase()])]));
    const head = validatorAt(pointerOf(key, "headers"));
    expect({ type, ok: head(headers), errors: head.errors ?? null }).toEqual({ type, ok: true, errors: null });
  }
});

test("GET /docs/events shows each type with its meaning, schema and example, without scripts", async () => {
  const res = await stack.gw.http.get("/docs/events");
  expect(res.status).toBe(200);
  expect(res.headers["content-type"]).toMatch(/text\/html/);
  for (const type of TREND_EVENT_TYPES) expect(res.text).toContain(`<section id="${type}">`);
  expect(res.text).toContain("Payload schema");
  expect(res.text).not.toMatch(/<script/i);
  expect(res.headers["content-security-policy"]).toContain("default-src 'none'");
});
