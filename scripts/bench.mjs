// `npm run bench [-- section ...]`: first-run steps, then the benchmarks (sections: gateway, webhooks, trends,
// workflow, conversions, reports, fleet; default all).
import { firstRun, run } from "./lib.mjs";

await firstRun(); // the report section runs the bundles, as `npm start` does
run(process.execPath, ["--import", "tsx", "bench/index.ts", ...process.argv.slice(2)]);
