// A status as text in a tinted badge: the word carries the meaning, the colour only repeats it.

const TONES: Record<string, "good" | "warn" | "bad" | "info"> = {
  active: "good", connected: "good", succeeded: "good", applied: "good", ready: "good", resolved: "good", ok: "good", revoked: "good",
  paused: "warn", retrying: "warn", needs_reauth: "warn", rate_limited: "warn", quota_exhausted: "warn", snoozed: "warn",
  partially_applied: "warn", muted: "warn", acknowledged: "info", queued: "info", running: "info", applying: "info", issued: "info", previewed: "info",
  disabled: "bad", failed: "bad", error: "bad", refused: "bad", open: "bad", not_reached: "warn", cancelled: "warn",
  low: "info", medium: "warn", high: "bad", critical: "bad",
  emerging: "info", rising: "warn", peaking: "bad", cooling: "info",
  up: "good", down: "bad", unavailable: "bad",
};

const LABELS: Record<string, string> = { needs_reauth: "needs re-authorisation", not_connected: "not connected" };

export function StatusBadge({ status, label }: { status: string; label?: string }) {
  const tone = TONES[status] ?? "neutral";
  return <span class={`badge badge-${tone}`}>{label ?? LABELS[status] ?? status.replaceAll("_", " ")}</span>;
}
