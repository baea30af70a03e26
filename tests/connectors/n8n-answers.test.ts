import type { OutboundResult } from "@trendgate/delivery";
import { pushError } from "../../packages/connectors/workflow/src/n8n/client.ts";

// What each of n8n's answers to a webhook push means (no server needed): the outbox retries, fails or leaves the push
// `unknown` from the ProviderError these give (tests/connectors/n8n.test.ts runs the same through the stand-in).

const answer = (over: Partial<OutboundResult>): OutboundResult =>
  ({ status: 404, headers: {}, body: "", truncated: false, durationMs: 3, error: null, sent: true, ...over });
const html = (path: string) => `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot POST ${path}</pre>\n</body>\n</html>\n`;

test.each([
  ["the start-up page (HTML 404): retried after n8n had time to register its webhooks", answer({ body: html("/webhook/x") }), { kind: "unavailable", retryable: true, code: "webhook_not_ready", acted: undefined }],
  ["n8n's JSON 404 (not registered): not found, not retried", answer({ body: JSON.stringify({ code: 404, message: 'The requested webhook "POST x" is not registered.' }) }), { kind: "not_found", retryable: false, code: "webhook_not_registered", acted: undefined }],
  ["500 Error in workflow (it ran and failed): may have acted", answer({ status: 500, body: JSON.stringify({ message: "Error in workflow" }) }), { kind: "unavailable", retryable: true, code: "workflow_error", acted: true }],
  ["a 503 from a proxy (the workflow did not start): retried", answer({ status: 503, body: "<html>busy</html>" }), { kind: "unavailable", retryable: true, code: undefined, acted: undefined }],
  ["no answer in time after the request was sent: may have acted", answer({ status: null, error: { code: "ETIMEDOUT", name: "TimeoutError", message: "no complete answer within 15000 ms" } }), { kind: "unavailable", retryable: true, code: "no_answer", acted: true }],
  ["no connection in time (nothing sent): retried", answer({ status: null, sent: false, error: { code: "ETIMEDOUT", name: "TimeoutError", message: "no connection within 5000 ms" } }), { kind: "unavailable", retryable: true, code: "unreachable", acted: undefined }],
  ["the Webhook node's header auth (403): refused", answer({ status: 403, body: JSON.stringify({ code: 403, message: "Authorization data is wrong!" }) }), { kind: "bad_request", retryable: false, code: "webhook_auth", acted: undefined }],
])("%s", (_, r, want) => {
  const err = pushError(r);
  expect({ kind: err.kind, retryable: err.retryable, code: err.detail.providerCode, acted: err.detail.mayHaveActed }).toEqual(want);
});

test("the start-up 404 asks for a wait longer than n8n's start-up window", () => {
  expect(pushError(answer({ body: html("/webhook/x") })).detail.retryAfterMs).toBeGreaterThanOrEqual(4000);
});
