import crypto from "node:crypto";

// Webhook signing. Secrets are `whsec_<base64 of 32 random bytes>`; the HMAC key is the decoded bytes, as in
// Standard Webhooks. Each delivery carries two signature schemes over the same raw body:
//   X-Webhook-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">      (this API's own header)
//   webhook-signature:   v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">  (Standard Webhooks, for off-the-shelf verifiers)
// During a secret rotation both secrets sign; signatures are space-separated in each header.

export const generateSecret = () => `whsec_${crypto.randomBytes(32).toString("base64")}`;

const keyOf = (secret: string) => Buffer.from(secret.replace(/^whsec_/, ""), "base64");

export interface SignedHeaders {
  "X-Webhook-Id": string;
  "X-Webhook-Timestamp": string;
  "X-Webhook-Signature": string;
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

export function signDelivery(secrets: string[], id: string, timestamp: number, body: string): SignedHeaders {
  const ts = String(timestamp);
  const own: string[] = [];
  const standard: string[] = [];
  for (const secret of secrets) {
    const key = keyOf(secret);
    own.push(`sha256=${crypto.createHmac("sha256", key).update(`${ts}.${body}`).digest("hex")}`);
    standard.push(`v1,${crypto.createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest("base64")}`);
  }
  return {
    "X-Webhook-Id": id,
    "X-Webhook-Timestamp": ts,
    "X-Webhook-Signature": own.join(" "),
    "webhook-id": id,
    "webhook-timestamp": ts,
    "webhook-signature": standard.join(" "),
  };
}

/** Receiver-side check of X-Webhook-Signature (used in docs and tests): any listed signature may match. */
export function verifyOwnSignature(secret: string, header: string, timestamp: string, body: string, toleranceSeconds = 300): boolean {
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const expected = Buffer.from(crypto.createHmac("sha256", keyOf(secret)).update(`${timestamp}.${body}`).digest("hex"));
  return header.split(" ").some((part) => {
    const got = Buffer.from(part.replace(/^sha256=/, ""));
    return got.length === expected.length && crypto.timingSafeEqual(got, expected);
  });
}

/** For execution records: which headers were sent, with signatures replaced. */
export function redactSignatures(headers: Record<string, string>): Record<string, string> {
  const out = { ...headers };
  for (const k of ["X-Webhook-Signature", "webhook-signature"]) if (out[k]) out[k] = "[redacted]";
  return out;
}
