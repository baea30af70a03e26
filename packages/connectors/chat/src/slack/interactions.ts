import { createHmac, timingSafeEqual } from "node:crypto";
import { ID_PATTERN } from "@trendgate/contracts";
import type { ChatFeedbackVerdict, ChatInteraction, ChatInteractions, OperatorAction } from "../kind.ts";
import { ACTION_PREFIX, APPROVE_ACTION, FEEDBACK_PREFIX, SNOOZE_BUTTON_MINUTES } from "./blocks.ts";

// Slack's interactivity requests (button presses on our cards). Verification follows
// https://docs.slack.dev/authentication/verifying-requests-from-slack: X-Slack-Signature is
// "v0=" + hex HMAC-SHA256(signing secret, "v0:" + X-Slack-Request-Timestamp + ":" + raw body), compared in constant
// time, and the timestamp must be within 5 minutes of now in either direction (a captured request cannot be replayed
// later). Verify before parsing: the body is only trusted after.

/** How far the request timestamp may be from our clock, either way. */
export const SLACK_SIGNATURE_MAX_AGE_SECONDS = 300;

const ACTIONS = new Set<OperatorAction>(["acknowledge", "resolve", "snooze", "reopen", "mute"]);
const VERDICTS = new Set<ChatFeedbackVerdict>(["not_a_trend", "useful"]);

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined | null {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : headers[key];
  if (Array.isArray(v)) return v.length === 1 ? v[0] : null; // sent twice: refuse rather than pick one
  return v;
}

export function verifySlackSignature(
  headers: Record<string, string | string[] | undefined>, rawBody: Buffer, signingSecret: string, now: Date = new Date(),
): { ok: true } | { ok: false; reason: string } {
  if (!signingSecret) return { ok: false, reason: "no signing secret is configured" };
  const ts = header(headers, "x-slack-request-timestamp");
  const sig = header(headers, "x-slack-signature");
  if (ts === null || sig === null) return { ok: false, reason: "signature headers sent more than once" };
  if (!ts) return { ok: false, reason: "missing X-Slack-Request-Timestamp" };
  if (!sig) return { ok: false, reason: "missing X-Slack-Signature" };
  if (!/^\d{1,12}$/.test(ts)) return { ok: false, reason: "X-Slack-Request-Timestamp is not a Unix time in seconds" };
  const skew = Math.floor(now.getTime() / 1000) - Number(ts);
  if (skew > SLACK_SIGNATURE_MAX_AGE_SECONDS) return { ok: false, reason: `stale request: timestamp is ${skew} s old (at most ${SLACK_SIGNATURE_MAX_AGE_SECONDS})` };
  if (skew < -SLACK_SIGNATURE_MAX_AGE_SECONDS) return { ok: false, reason: `timestamp is ${-skew} s in the future (at most ${SLACK_SIGNATURE_MAX_AGE_SECONDS})` };
  if (!/^v0=[0-9a-f]{64}$/.test(sig)) return { ok: false, reason: "X-Slack-Signature is not a v0 signature" };
  const expected = createHmac("sha256", signingSecret).update(`v0:${ts}:`).update(rawBody).digest();
  if (!timingSafeEqual(expected, Buffer.from(sig.slice(3), "hex"))) return { ok: false, reason: "signature mismatch" };
  return { ok: true };
}

/** Signs a body as Slack does (for tests and local tools). */
export function signSlackRequest(rawBody: Buffer | string, signingSecret: string, now: Date = new Date()): { "x-slack-request-timestamp": string; "x-slack-signature": string } {
  const ts = String(Math.floor(now.getTime() / 1000));
  const sig = createHmac("sha256", signingSecret).update(`v0:${ts}:`).update(rawBody).digest("hex");
  return { "x-slack-request-timestamp": ts, "x-slack-signature": `v0=${sig}` };
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);

/** A `block_actions` payload (form field `payload`) pressing one of our buttons; null for anything else. */
export function parseSlackInteraction(rawBody: Buffer): ChatInteraction | null {
  let payload: any;
  try {
    const form = new URLSearchParams(rawBody.toString("utf8"));
    payload = JSON.parse(form.get("payload") ?? "");
  } catch {
    return null;
  }
  if (!payload || typeof payload !== "object" || payload.type !== "block_actions" || !Array.isArray(payload.actions)) return null;

  for (const a of payload.actions) {
    const id = str(a?.action_id);
    if (id === APPROVE_ACTION) return approvalOf(payload, a);
    const action = id?.startsWith(ACTION_PREFIX) ? id.slice(ACTION_PREFIX.length) as OperatorAction : undefined;
    const verdict = id?.startsWith(FEEDBACK_PREFIX) ? id.slice(FEEDBACK_PREFIX.length) as ChatFeedbackVerdict : undefined;
    if (!(action && ACTIONS.has(action)) && !(verdict && VERDICTS.has(verdict))) continue;
    let value: any;
    try { value = JSON.parse(str(a.value) ?? ""); } catch { return null; }
    const itemId = str(value?.item_id);
    if (!itemId || !ID_PATTERN.test(itemId)) return null;
    const userId = str(payload.user?.id);
    const teamId = str(payload.team?.id) ?? str(payload.user?.team_id);
    if (!userId || !teamId) return null;
    const version = Number.isSafeInteger(value.version) && value.version > 0 ? value.version as number : undefined;
    const snooze = Number.isSafeInteger(value.snooze_minutes) && value.snooze_minutes > 0 && value.snooze_minutes <= 7 * 24 * 60 ? value.snooze_minutes as number : SNOOZE_BUTTON_MINUTES;
    const name = str(payload.user?.username) ?? str(payload.user?.name);
    if (verdict) return { itemId, feedback: verdict, user: { id: userId, ...(name ? { name } : {}) }, teamId };
    return {
      itemId,
      action,
      ...(action === "snooze" ? { snoozeMinutes: snooze } : {}),
      ...(version !== undefined ? { version } : {}),
      user: { id: userId, ...(name ? { name } : {}) },
      teamId,
    };
  }
  return null;
}

/** An approve press: the item, the plan and the hash its card showed. */
function approvalOf(payload: any, a: any): ChatInteraction | null {
  let value: any;
  try { value = JSON.parse(str(a.value) ?? ""); } catch { return null; }
  const itemId = str(value?.item_id);
  const planId = str(value?.plan_id);
  const planHash = str(value?.plan_hash);
  const userId = str(payload.user?.id);
  const teamId = str(payload.team?.id) ?? str(payload.user?.team_id);
  if (!itemId || !ID_PATTERN.test(itemId) || !planId || !ID_PATTERN.test(planId) || !planHash || !userId || !teamId) return null;
  const name = str(payload.user?.username) ?? str(payload.user?.name);
  return { itemId, approve: { planId, planHash }, user: { id: userId, ...(name ? { name } : {}) }, teamId };
}

export const slackInteractions = {
  signingSecretEnv: "SLACK_SIGNING_SECRET",
  verify: verifySlackSignature,
  parse: parseSlackInteraction,
  fromWorkspaceOf: (it, account) => account.team_id === it.teamId,
  // Shown to the presser only, leaving the card as it is (Slack's response to an interaction request).
  privateReply: (text) => ({ response_type: "ephemeral", replace_original: false, text }),
} satisfies ChatInteractions;
