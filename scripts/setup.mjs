// `npm run setup`: every first-run step of `npm start` without starting anything (installs, writes or completes
// .env with fresh secrets, checks Postgres and Redis, generates the Prisma client, applies migrations, bundles the
// apps to dist/).
import { firstRun, log } from "./lib.mjs";

await firstRun({ dev: false });
log("ready: `npm start` runs the gateway and the workers");
