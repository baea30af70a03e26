import type { Db } from "./client.ts";
import type { Prisma, SocialConnection } from "./generated/client.ts";
import { newId } from "./ids.ts";

// The social API's reads and writes of social connections (one per account and provider). Actions asked through the
// API live in the connection's cursor (`cursor.actions`, newest first), where the worker that runs them records the outcome.

export type SocialConnectionRow = SocialConnection;

export const findSocialConnection = (db: Db, accountId: string, provider: string) =>
  db.socialConnection.findUnique({ where: { accountId_provider: { accountId, provider } } });

/** The providers the account has a social connection to, whatever its status. */
export async function socialConnectionProviders(db: Db, accountId: string): Promise<Set<string>> {
  const rows = await db.socialConnection.findMany({ where: { accountId }, select: { provider: true } });
  return new Set(rows.map((r) => r.provider));
}

/** What PUT …/connection sets, on a new connection or over an existing one (whose cursor and quota are kept). */
export interface SocialConnectionFields {
  status: string;
  terms: string[];
  options: Record<string, unknown>;
  credentialsCiphertext: string;
  baseUrl: string | null;
  lastError: null;
  nextPollAt: Date | null;
}

export function saveSocialConnection(db: Db, accountId: string, provider: string, f: SocialConnectionFields) {
  const fields = { ...f, options: f.options as Prisma.InputJsonValue };
  return db.socialConnection.upsert({
    where: { accountId_provider: { accountId, provider } },
    create: { id: newId("soc"), accountId, provider, ...fields },
    update: fields,
  });
}

/**
 * Removes the account's connection of a provider: its sealed credentials, cursor and quota go with it; the signals it
 * stored stay (they are the account's history). Returns whether there was one.
 */
export async function deleteSocialConnection(db: Db, accountId: string, provider: string): Promise<boolean> {
  const { count } = await db.socialConnection.deleteMany({ where: { accountId, provider } });
  return count > 0;
}

/** Stores an action first in the connection's list of actions, keeping the newest `max`. One statement: concurrent requests lose none. */
export async function prependSocialAction(db: Db, connectionId: string, action: unknown, max: number): Promise<void> {
  await db.$pool.query(
    `UPDATE social_connections SET updated_at = now(), cursor = jsonb_set(cursor, '{actions}', (
       SELECT coalesce(jsonb_agg(a ORDER BY n), '[]'::jsonb)
         FROM jsonb_array_elements(jsonb_build_array($2::jsonb) || coalesce(cursor->'actions', '[]'::jsonb)) WITH ORDINALITY t(a, n)
        WHERE n <= $3))
     WHERE id = $1`,
    [connectionId, JSON.stringify(action), max],
  );
}

/**
 * Merges `changes` into the stored action `draftId` of kind `action`, only while it awaits approval (checked in the
 * same statement, so two decisions cannot both win). Returns the action as stored now, or null when no such draft
 * awaits approval.
 */
export async function decideSocialDraft<A>(db: Db, connectionId: string, action: string, draftId: string, changes: Record<string, unknown>): Promise<A | null> {
  const { rows } = await db.$pool.query<{ a: A }>(
    `UPDATE social_connections SET updated_at = now(), cursor = jsonb_set(cursor, '{actions}', (
       SELECT jsonb_agg(CASE WHEN a->>'id' = $2 THEN a || $3::jsonb ELSE a END ORDER BY n)
         FROM jsonb_array_elements(cursor->'actions') WITH ORDINALITY t(a, n)))
     WHERE id = $1 AND cursor->'actions' @> jsonb_build_array(jsonb_build_object('id', $2::text, 'action', $4::text, 'status', 'awaiting_approval'))
     RETURNING (SELECT a FROM jsonb_array_elements(cursor->'actions') a WHERE a->>'id' = $2) AS a`,
    [connectionId, draftId, JSON.stringify(changes), action],
  );
  return rows.length ? rows[0].a : null;
}

/**
 * Replaces a connection's sealed credentials after the provider rotated them (a refresh token that works only once),
 * unless they were replaced meanwhile (a PUT, whose credentials then win). Returns whether it wrote.
 */
export async function rotateSocialCredentials(db: Db, connectionId: string, expected: string, next: string): Promise<boolean> {
  const { count } = await db.socialConnection.updateMany({ where: { id: connectionId, credentialsCiphertext: expected }, data: { credentialsCiphertext: next } });
  return count > 0;
}

/** The quota state the connections of one provider quota project share ({} until a poll stores one). */
export async function loadSocialQuotaProject(db: Db, provider: string, project: string): Promise<Record<string, unknown>> {
  const { rows } = await db.$pool.query<{ quota: Record<string, unknown> }>(
    `SELECT quota FROM social_quota_projects WHERE provider = $1 AND project = $2`, [provider, project]);
  return rows[0]?.quota ?? {};
}

/** Stores a quota project's state; callers hold the project's lock, so the last writer read what the one before left. */
export async function saveSocialQuotaProject(db: Db, provider: string, project: string, quota: Record<string, unknown>): Promise<void> {
  await db.$pool.query(
    `INSERT INTO social_quota_projects (provider, project, quota, updated_at) VALUES ($1, $2, $3::jsonb, now() AT TIME ZONE 'UTC')
     ON CONFLICT (provider, project) DO UPDATE SET quota = EXCLUDED.quota, updated_at = EXCLUDED.updated_at`,
    [provider, project, JSON.stringify(quota)]);
}
