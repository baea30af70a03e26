import type { OutboundResult } from "@trendgate/delivery";

// Small helpers every provider client needs to read an OutboundResult.

/** A response header's first value (Node gives repeated headers as arrays). */
export function header(headers: OutboundResult["headers"], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A header's number, or null when absent or not a number (providers send "598.0", "", garbage). */
export function num(v: string | undefined): number | null {
  if (v === undefined || v.trim() === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** The body as JSON, or undefined when it is not JSON (an HTML error page from a proxy, a cut-off body). */
export function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
