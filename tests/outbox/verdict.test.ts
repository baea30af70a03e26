import { ProviderError } from "@trendgate/connector-core";
import { classify, decide, isRetryableKind, judgeFailure, KIND_OF_CLASS, webhookFailure, type ErrorClass, type OutboundResult } from "@trendgate/delivery";

// Retry or give up, for every outbox queue and webhook deliveries, from the error vocabulary alone (no database needed).

const schedule = { delaysSeconds: [5, 30], jitter: 0, maxRetryAfterSeconds: 3600 };
const now = Date.parse("2026-11-23T12:00:00Z");

test("a spent quota waits for its reset, a rate limit for its Retry-After, each at least the planned delay", () => {
  const quota = judgeFailure(new ProviderError("slack", "quota_exhausted", "daily limit", { resetAt: new Date(now + 600_000) }), schedule, 1, now);
  expect(quota).toMatchObject({ outcome: "retrying", delayMs: 600_000, errorClass: "quota_exhausted" });
  const limited = judgeFailure(new ProviderError("slack", "rate_limited", "slow down", { status: 429, retryAfterMs: 2000 }), schedule, 1, now);
  expect(limited).toMatchObject({ outcome: "retrying", delayMs: 5000, responseStatus: 429 }); // the schedule's 5 s is longer
  const capped = judgeFailure(new ProviderError("slack", "rate_limited", "slow down", { retryAfterMs: 86_400_000 }), schedule, 2, now);
  expect(capped.delayMs).toBe(3_600_000); // never more than maxRetryAfterSeconds
});

test("the last attempt of the schedule gives up, and terminal kinds give up at once", () => {
  expect(judgeFailure(new ProviderError("slack", "unavailable", "HTTP 502"), schedule, 3, now)).toMatchObject({ outcome: "failed", delayMs: null });
  for (const kind of ["unauthorized", "bad_request", "not_found"] as const)
    expect(judgeFailure(new ProviderError("slack", kind, kind), schedule, 1, now)).toMatchObject({ outcome: "failed", delayMs: null, errorClass: kind });
});

test("anything that is not a ProviderError is retried as unavailable and flagged for the log", () => {
  expect(judgeFailure(new TypeError("x is undefined"), schedule, 1, now)).toMatchObject({
    outcome: "retrying", delayMs: 5000, errorClass: "unavailable", errorMessage: "x is undefined", unexpected: true,
  });
});

test("a failure after which the peer may have acted is not retried, whatever its kind: its outcome is unknown", () => {
  const ran = new ProviderError("n8n", "unavailable", "Error in workflow", { status: 500, mayHaveActed: true });
  expect(judgeFailure(ran, schedule, 1, now)).toMatchObject({ outcome: "unknown", delayMs: null, errorClass: "unavailable", responseStatus: 500 });
  expect(judgeFailure(new ProviderError("n8n", "unavailable", "HTTP 503", { status: 503 }), schedule, 1, now)).toMatchObject({ outcome: "retrying" });
});

test("webhook answers are judged by the same verdict: Retry-After honoured, 410 and other 4xx final, the schedule's end final", () => {
  const answer = (status: number, headers: Record<string, string> = {}) => {
    const r: OutboundResult = { status, headers, body: "", truncated: false, durationMs: 1, error: null };
    return webhookFailure(classify(r), status, `HTTP ${status}`);
  };
  const noJitter = () => 0.5;
  expect(answer(200)).toBeNull();
  expect(decide(answer(503, { "retry-after": "120" })!, schedule, 1, noJitter)).toEqual({ outcome: "retrying", delayMs: 120_000 });
  expect(decide(answer(500)!, schedule, 2, noJitter)).toEqual({ outcome: "retrying", delayMs: 30_000 });
  expect(decide(answer(500)!, schedule, 3, noJitter)).toEqual({ outcome: "failed", delayMs: null });
  expect(answer(410)).toMatchObject({ kind: "not_found", errorClass: "http_410" });
  expect(decide(answer(410)!, schedule, 1, noJitter)).toEqual({ outcome: "failed", delayMs: null });
  expect(decide(answer(422)!, schedule, 1, noJitter)).toEqual({ outcome: "failed", delayMs: null });
});

test("a peer starting up (retryWithinMs) is tried again within that, not after the schedule's longer delay; a Retry-After still comes first", () => {
  const starting = (over: object = {}) => new ProviderError("n8n", "unavailable", "starting", { status: 404, retryWithinMs: 5000, ...over });
  const long = { delaysSeconds: [600, 1800], jitter: 0.2, maxRetryAfterSeconds: 3600 };
  expect(judgeFailure(starting(), long, 1, now)).toMatchObject({ outcome: "retrying", delayMs: 5000 });
  expect(judgeFailure(starting(), schedule, 1, now).delayMs).toBeLessThanOrEqual(5000); // a shorter planned delay stays
  expect(judgeFailure(starting({ retryAfterMs: 20_000 }), long, 1, now)).toMatchObject({ delayMs: 20_000 });
  expect(judgeFailure(starting(), long, 3, now)).toMatchObject({ outcome: "failed", delayMs: null }); // the schedule still ends
});

test("one vocabulary: every webhook error class is a failure kind, and the kind alone says whether it is retried", () => {
  const answer = (r: Partial<OutboundResult>) => classify({ status: null, headers: {}, body: "", truncated: false, durationMs: 1, error: null, ...r });
  const cases: [ErrorClass, Partial<OutboundResult>, boolean][] = [
    ["timeout", { error: { code: "ETIMEDOUT", name: "TimeoutError", message: "" } }, true],
    ["connection_error", { error: { code: "ECONNREFUSED", name: "Error", message: "" } }, true],
    ["dns_error", { error: { code: "ENOTFOUND", name: "Error", message: "" } }, true],
    ["blocked_destination", { error: { code: "ERR_BLOCKED_DESTINATION", name: "Error", message: "" } }, false],
    ["http_3xx", { status: 301 }, true], ["http_408", { status: 408 }, true], ["http_410", { status: 410 }, false],
    ["http_429", { status: 429 }, true], ["http_4xx", { status: 400 }, false], ["http_5xx", { status: 502 }, true],
  ];
  for (const [errorClass, r, retried] of cases) {
    const v = answer(r);
    expect([v.errorClass, v.retryable, isRetryableKind(KIND_OF_CLASS[errorClass])]).toEqual([errorClass, retried, retried]);
    expect(decide(webhookFailure(v, r.status ?? null, "x")!, schedule, 1, () => 0.5).outcome).toBe(retried ? "retrying" : "failed");
  }
});
