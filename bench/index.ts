// Benchmarks. Speed targets are tracked here as ratios against a bare baseline measured in the same run,
// never in tests. Usage: npm run bench [-- gateway webhooks trends backtest fleet]
import { benchBacktest } from "./backtest.ts";
import { benchConversions } from "./conversions.ts";
import { benchFleet } from "./fleet.ts";
import { benchGateway } from "./gateway.ts";
import { benchReports } from "./reports.ts";
import { benchSoak } from "./soak.ts";
import { benchTrends } from "./trends.ts";
import { benchWebhooks } from "./webhooks.ts";
import { benchWorkflow } from "./workflow.ts";

const sections: Record<string, () => Promise<unknown>> = { gateway: benchGateway, webhooks: benchWebhooks, trends: benchTrends, backtest: benchBacktest, workflow: benchWorkflow, conversions: benchConversions, reports: benchReports, fleet: benchFleet, soak: benchSoak };
/** Run only when named: the storage soak takes the better part of an hour and ~70 GB of disk at its default size. */
const ON_REQUEST = ["soak"];
const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(sections).filter((s) => !ON_REQUEST.includes(s));
for (const name of wanted) {
  if (!sections[name]) { console.error(`unknown section ${name}; known: ${Object.keys(sections).join(", ")}`); process.exit(64); }
  await sections[name]();
}
process.exit(0);
