import fs from "node:fs";
import path from "node:path";
import pg from "pg";

// A database of one test file's own beside this jest worker's (its name: the worker's with a suffix), built by applying
// the repository's migrations as SQL, in order: for what needs a second database (a read replica's stand-in) or a
// database at an earlier migration.

const dir = path.resolve(import.meta.dirname, "../../prisma/migrations");
/** Every migration, oldest first. */
export const MIGRATIONS = fs.readdirSync(dir).filter((d) => fs.existsSync(path.join(dir, d, "migration.sql"))).sort();

export interface ScratchDb {
  url: string;
  client: pg.Client;
  /** Applies these migrations (names from MIGRATIONS). */
  migrate(names?: readonly string[]): Promise<void>;
  drop(): Promise<void>;
}

export async function scratchDb(suffix: string): Promise<ScratchDb> {
  const base = new URL(process.env.DATABASE_URL!);
  const name = `${base.pathname.slice(1)}_${suffix}`;
  const adminUrl = new URL(base.href);
  adminUrl.pathname = "/postgres";
  const admin = async (sql: string) => { const a = new pg.Client({ connectionString: adminUrl.href }); await a.connect(); try { await a.query(sql); } finally { await a.end(); } };
  await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(base.href);
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.href });
  await client.connect();
  return {
    url: url.href,
    client,
    async migrate(names = MIGRATIONS) {
      for (const m of names) await client.query(fs.readFileSync(path.join(dir, m, "migration.sql"), "utf8"));
    },
    async drop() {
      await client.end().catch(() => {});
      await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}
