// Ads reporting: which providers a report reads, their rows normalised and merged, CSV, and exports
// stored in chunks. Each provider's report endpoint is read by its reporting client (packages/connectors/ads).
export * from "./sources.ts";
export * from "./pages.ts";
export * from "./normalise.ts";
export * from "./csv.ts";
export * from "./export-store.ts";
export * from "./export-run.ts";
export * from "./catalog.ts";
