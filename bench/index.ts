// Benchmarks. Speed targets are tracked here as ratios against a bare baseline measured in the same run,
// never in tests. Usage: npm run bench [-- gateway webhooks trends backtest fleet]
import { benchBacktest } from "./backtest.ts";
import { benchConversions } from "./conversions.ts";
import { benchFleet } from "./fleet.ts";
import { benchGateway } from "./gateway.ts";
import { benchReports } from "./reports.ts";
import { benchTrends } from "./trends.ts";
import { benchWebhooks } from "./webhooks.ts";
import { benchWorkflow } from "./workflow.ts";

const sections: Record<string, () => Promise<unknown>> = { gateway: benchGateway, webhooks: benchWebhooks, trends: benchTrends, backtest: benchBacktest, workflow: benchWorkflow, conversions: benchConversions, reports: benchReports, fleet: benchFleet };
const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(sections);
for (const name of wanted) {
  if (!sections[name]) { console.error(`unknown section ${name}; known: ${Object.keys(sections).join(", ")}`); process.exit(64); }
  await sections[name]();
}
process.exit(0);
