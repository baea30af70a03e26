// npm run api-key -- create --name NAME [--account ACCOUNT_ID] [--plan free|pro|enterprise] [--expires-in-days N]
// npm run api-key -- list --account ACCOUNT_ID
// npm run api-key -- revoke --id KEY_ID [--keep-sessions]
// `create` without --account makes a new account. The new key is printed alone on the last line.
import fs from "node:fs";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { ConfigSchema } from "@trendgate/config";
import { createAccount, createApiKey, createDb, revokeKeyConsoleSessions } from "@trendgate/db";

if (fs.existsSync(".env")) process.loadEnvFile(".env");
const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { name: { type: "string" }, account: { type: "string" }, plan: { type: "string" }, "expires-in-days": { type: "string" }, id: { type: "string" }, "keep-sessions": { type: "boolean" } },
});
const fail = (msg: string): never => { process.stderr.write(msg + "\n"); process.exit(64); };
const db = createDb(process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/trendgate");

try {
  switch (positionals[0]) {
    case "create": {
      const name = values.name?.trim() || fail("--name is required");
      const days = values["expires-in-days"] ? Number(values["expires-in-days"]) : undefined;
      if (days !== undefined && !(days > 0)) fail("--expires-in-days must be a positive number");
      // A plan the gateway does not know would silently get the free quota: refuse it here.
      const plans = Object.keys(ConfigSchema.shape.RATE_LIMIT_PLANS.parse(process.env.RATE_LIMIT_PLANS || undefined));
      if (values.plan !== undefined && !plans.includes(values.plan)) fail(`--plan must be one of ${plans.join(", ")} (RATE_LIMIT_PLANS); got "${values.plan}"`);
      if (values.plan !== undefined && values.account) fail("--plan applies to a new account; leave out --account");
      let accountId = values.account;
      if (accountId) {
        if (!(await db.account.findUnique({ where: { id: accountId } }))) fail(`No account ${accountId}`);
      } else {
        const account = await createAccount(db, name, values.plan ?? "free");
        accountId = account.id;
        console.log(`account: ${account.id} (plan ${account.plan})`);
      }
      const { row, key } = await createApiKey(db, accountId, name, days ? new Date(Date.now() + days * 86_400_000) : null);
      console.log(`key id:  ${row.id}${row.expiresAt ? `, expires ${row.expiresAt.toISOString()}` : ""}`);
      console.log("Store this key now; it is not shown again:");
      console.log(key);
      break;
    }
    case "list": {
      const account = values.account ?? fail("--account is required");
      for (const k of await db.apiKey.findMany({ where: { accountId: account }, orderBy: { id: "desc" } }))
        console.log(`${k.id}  tg_${k.prefix}…  ${k.name}  ${k.revokedAt ? "revoked" : k.expiresAt ? `expires ${k.expiresAt.toISOString()}` : "active"}`);
      break;
    }
    case "revoke": {
      const id = values.id ?? fail("--id is required");
      const r = await db.apiKey.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } });
      const key = await db.apiKey.findUnique({ where: { id } });
      // The console sessions the key created end with it, as with the API's DELETE /api/keys/{id}.
      const sessions = key && !values["keep-sessions"] ? await revokeKeyConsoleSessions(db, key.accountId, key.id) : [];
      if ((r.count || sessions.length) && key) { // tell running gateways to drop them from their caches now, as the API's revoke does
        const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { lazyConnect: true, maxRetriesPerRequest: 1 });
        const channel = `${process.env.QUEUE_PREFIX ?? "trendgate"}:auth:invalidate`;
        await redis.connect().then(async () => { for (const v of [key.prefix, ...sessions]) await redis.publish(channel, v); })
          .catch(() => console.log("Redis unreachable: gateways stop accepting the key and its sessions within AUTH_CACHE_SECONDS"));
        redis.disconnect();
      }
      console.log(`${r.count ? `revoked ${id}` : `no active key ${id}`}${sessions.length ? `; ended ${sessions.length} console session(s)` : ""}`);
      break;
    }
    default:
      fail("usage: npm run api-key -- create --name NAME [--account ID] [--plan P] [--expires-in-days N] | list --account ID | revoke --id KEY_ID [--keep-sessions]");
  }
} finally {
  await db.$disconnect();
}
