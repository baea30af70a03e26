import type { ConnectorRegistry } from "@trendgate/connectors";
import type { FieldError, OnCallMember, OnCallScheduleBody } from "@trendgate/contracts";
import {
  createOnCallSchedule, deleteOnCallSchedule, onCallScheduleUsers, replaceOnCallSchedule, type Db, type OnCallScheduleInput, type OnCallScheduleRow, type Tx,
} from "@trendgate/db";
import { ApiError, notFound } from "../http/api-error.ts";

// On-call schedules over REST (the routes are routes/schedules.ts; who is on call is packages/operator/src/on-call.ts).
// What the contract cannot check is checked here: every chat user names a chat provider of this build's registry.
// A schedule a saved escalation step names is not deleted (409 naming the rules); an item's kept chain may still
// name a deleted one: its step then says so in the chat.

function input(registry: ConnectorRegistry, body: OnCallScheduleBody): OnCallScheduleInput {
  const errors: FieldError[] = [];
  const known = registry.ofKind("chat").map((c) => c.manifest.id);
  const check = (m: OnCallMember, at: string) => m.chat_users.forEach((u, i) => {
    if (!known.includes(u.provider))
      errors.push({ location: "body", path: `${at}.chat_users.${i}.provider`, message: `not a chat provider (one of: ${known.join(", ")})`, code: "invalid_value" });
  });
  body.rotation.members.forEach((m, i) => check(m, `rotation.members.${i}`));
  body.overrides.forEach((o, i) => check(o.member, `overrides.${i}.member`));
  if (errors.length) throw new ApiError("validation_failed", errors.map((e) => `${e.path}: ${e.message}`).join("; "), { errors });
  // Stored as the runtime names the zone (europe/berlin is Europe/Berlin), which reads back as valid input.
  const timeZone = new Intl.DateTimeFormat("en-US", { timeZone: body.time_zone }).resolvedOptions().timeZone;
  return { name: body.name, timeZone, rotation: body.rotation, overrides: body.overrides };
}

export const createSchedule = (tx: Tx, registry: ConnectorRegistry, accountId: string, body: OnCallScheduleBody): Promise<OnCallScheduleRow> =>
  createOnCallSchedule(tx, accountId, input(registry, body));

export async function replaceSchedule(db: Db | Tx, registry: ConnectorRegistry, accountId: string, id: string, body: OnCallScheduleBody): Promise<OnCallScheduleRow> {
  const row = await replaceOnCallSchedule(db, accountId, id, input(registry, body));
  if (!row) throw notFound("Schedule");
  return row;
}

export async function removeSchedule(db: Db, accountId: string, id: string): Promise<void> {
  const users = await onCallScheduleUsers(db, accountId, id);
  if (users.length) throw new ApiError("conflict", `the escalation of ${users.join(", ")} notifies this schedule: change those steps first (PUT /api/operator/routes)`);
  if (!(await deleteOnCallSchedule(db, accountId, id))) throw notFound("Schedule");
}
