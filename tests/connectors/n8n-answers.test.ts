import type { OutboundResult } from "@trendgate/delivery";
import { pushError } from "../../packages/connectors/workflow/src/n8n/client.ts";

// What each of n8n's answers to a webhook push means (no server needed): the outbox retries, fails or leaves the push
// `unknown` from the ProviderError these give (tests/connectors/n8n.test.ts runs the same through the stand-in).

const answer = (over: Partial<OutboundResult>): OutboundResult =>
  ({ status: 404, headers: {}, body: "", truncated: false, durationMs: 3, error: null, sent: true, ...over });
const html = (path: string) => `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot POST ${path}</pre>\n</body>\n</html>\n`;

test.each([
  ["200 `n8n is starting up. Please wait` (its migrations run; nothing ran): retried", answer({ status: 200, headers: { "content-type": "text/html; charset=utf-8" }, body: "n8n is starting up. Please wait" }), { kind: "unavailable", retryable: true, code: "starting_up", acted: undefined }],
  ["the start-up page (HTML 404): retried after n8n had time to register its webhooks", answer({ body: html("/webhook/x") }), { kind: "unavailable", retryable: true, code: "webhook_not_ready", acted: undefined }],
  ["n8n's JSON 404 (not registered): not found, not retried", answer({ body: JSON.stringify({ code: 404, message: 'The requested webhook "POST x" is not registered.' }) }), { kind: "not_found", retryable: false, code: "webhook_not_registered", acted: undefined }],
  ["500 Error in workflow (it ran and failed): may have acted", answer({ status: 500, body: JSON.stringify({ message: "Error in workflow" }) }), { kind: "unavailable", retryable: true, code: "workflow_error", acted: true }],
  ["a 503 from a proxy (the workflow did not start): retried", answer({ status: 503, body: "<html>busy</html>" }), { kind: "unavailable", retryable: true, code: undefined, acted: undefined }],
  ["no answer in time after the request was sent: may have acted", answer({ status: null, error: { code: "ETIMEDOUT", name: "TimeoutError", message: "no complete answer within 15000 ms" } }), { kind: "unavailable", retryable: true, code: "no_answer", acted: true }],
  ["no connection in time (nothing sent): retried", answer({ status: null, sent: false, error: { code: "ETIMEDOUT", name: "TimeoutError", message: "no connection within 5000 ms" } }), { kind: "unavailable", retryable: true, code: "unreachable", acted: undefined }],
  ["the Webhook node's header auth (403, plain text): refused", answer({ status: 403, headers: { "www-authenticate": 'Basic realm="Webhook"' }, body: "Authorization data is wrong!" }), { kind: "bad_request", retryable: false, code: "webhook_auth", acted: undefined }],
])("%s", (_, r, want) => {
  const err = pushError(r);
  expect({ kind: err.kind, retryable: err.retryable, code: err.detail.providerCode, acted: err.detail.mayHaveActed }).toEqual(want);
});

test("the start-up answers ask for the next attempt within seconds, not after the schedule's later minutes", () => {
  const notReady = pushError(answer({ body: html("/webhook/x") })).detail;
  expect(notReady).toMatchObject({ retryWithinMs: expect.any(Number) });
  expect(notReady.retryWithinMs).toBeLessThanOrEqual(6000); // n8n registers its webhooks 5-12 s after it starts listening
  expect(notReady.retryAfterMs).toBeLessThan(notReady.retryWithinMs!); // not at once either: each try spends an attempt
  expect(pushError(answer({ status: 200, body: "n8n is starting up. Please wait" })).detail.retryWithinMs).toBeLessThanOrEqual(60_000);
});

test("the Webhook node's plain-text refusal is quoted in the error", () => {
  expect(pushError(answer({ status: 403, body: "Authorization data is wrong!" })).message).toContain("Authorization data is wrong!");
});
