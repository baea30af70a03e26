// The one state machine of operator items (packages/operator/src/state-machine.ts), on its own: which changes are
// allowed from each state, and what each one sets. The REST routes, chat buttons, tick and intake all go through it.
import { allowedActions, transition, type Change } from "@trendgate/operator";

const now = new Date("2026-11-23T10:00:00.000Z");
const ctx = { now, actor: "key:key_01test", renotifyMs: 15 * 60_000 };
const item = (state: "open" | "acknowledged" | "snoozed" | "resolved", severity: "high" | "critical" = "high") =>
  ({ state, severity, acknowledgedAt: state === "acknowledged" ? new Date(0) : null, acknowledgedBy: state === "acknowledged" ? "chat:T1/U1" : null });

test("each state allows exactly the documented changes", () => {
  const changes: Change[] = ["acknowledge", "resolve", "snooze", "reopen", "unsnoozed", "mute"];
  const table = Object.fromEntries((["open", "acknowledged", "snoozed", "resolved"] as const).map((s) =>
    [s, Object.fromEntries(changes.map((c) => { const t = transition(item(s), c, ctx); return [c, t.ok ? t.to : "-"]; }))]));
  expect(table).toEqual({
    open: { acknowledge: "acknowledged", resolve: "resolved", snooze: "snoozed", reopen: "-", unsnoozed: "-", mute: "resolved" },
    acknowledged: { acknowledge: "-", resolve: "resolved", snooze: "snoozed", reopen: "open", unsnoozed: "-", mute: "resolved" },
    snoozed: { acknowledge: "acknowledged", resolve: "resolved", snooze: "snoozed", reopen: "open", unsnoozed: "open", mute: "resolved" },
    resolved: { acknowledge: "-", resolve: "-", snooze: "-", reopen: "open", unsnoozed: "-", mute: "-" },
  });
  // A refusal says what would have been allowed (never the system-only change).
  expect(transition(item("resolved"), "acknowledge", ctx)).toEqual({ ok: false, from: "resolved", allowed: ["reopen"] });
  expect(allowedActions("snoozed")).toEqual(["acknowledge", "resolve", "snooze", "reopen", "mute"]);
});

test("acknowledging records who and when, and stops re-notification", () => {
  const t = transition(item("open", "critical"), "acknowledge", ctx);
  expect(t).toMatchObject({ ok: true, patch: { state: "acknowledged", acknowledgedBy: "key:key_01test", acknowledgedAt: now, renotifyAt: null, snoozedUntil: null } });
});

test("snoozing sets its end (60 minutes unless told); resolving keeps who acknowledged", () => {
  expect(transition(item("open"), "snooze", ctx)).toMatchObject({ patch: { state: "snoozed", snoozedUntil: new Date(now.getTime() + 60 * 60_000) } });
  expect(transition(item("open"), "snooze", { ...ctx, snoozeMinutes: 5 })).toMatchObject({ patch: { snoozedUntil: new Date(now.getTime() + 5 * 60_000) } });
  expect(transition(item("acknowledged"), "resolve", ctx)).toMatchObject({ patch: { state: "resolved", resolvedBy: "key:key_01test", resolvedAt: now, acknowledgedBy: "chat:T1/U1" } });
});

test("back to open: the acknowledgement goes, and a critical item re-notifies again after the delay", () => {
  const critical = transition(item("acknowledged", "critical"), "reopen", ctx);
  expect(critical).toMatchObject({ ok: true, patch: { state: "open", acknowledgedBy: null, acknowledgedAt: null, renotifyAt: new Date(now.getTime() + 15 * 60_000) } });
  expect(transition(item("snoozed", "high"), "unsnoozed", { ...ctx, actor: "system" })).toMatchObject({ patch: { state: "open", renotifyAt: null, snoozedUntil: null } });
});
