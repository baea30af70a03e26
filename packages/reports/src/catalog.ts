import type { ConnectorRegistry } from "@trendgate/connectors";

// What can be reported: the dimensions and metrics every provider's rows share (normalised), and per ads provider
// whether it reports and within which limits, with its own definitions of a click and a conversion.

export const DIMENSIONS = [
  { name: "date", description: "YYYY-MM-DD in the ad account's time zone (`time_zone` per provider in each report); absent with granularity total" },
  { name: "provider", description: "The ads provider the row came from" },
  { name: "account_id", description: "The ad account" },
  { name: "campaign", description: "campaign_id, campaign_name (a LinkedIn campaign group)" },
  { name: "ad_group", description: "ad_group_id, ad_group_name: the ad group, ad set, ad squad or LinkedIn campaign" },
  { name: "ad", description: "ad_id, ad_name (an ad or creative)" },
];

export const METRICS = [
  { name: "impressions", description: "As the provider counts them", computed: false },
  { name: "clicks", description: "As the provider defines a click (see each provider's `clicks`)", computed: false },
  { name: "spend_micros", description: "Integer micros of `currency` (ISO 4217, the ad account's), as a decimal string; decimals converted exactly", computed: false },
  { name: "conversions", description: "As the provider defines them (see each provider's `conversions`); null where it reports none", computed: false },
  { name: "ctr", description: "clicks / impressions, computed by us the same way for every provider", computed: true },
  { name: "cpc_micros", description: "spend_micros / clicks rounded down, computed by us", computed: true },
];

export function providerCatalog(registry: ConnectorRegistry, connected: Set<string>) {
  return registry.ofKind("ads").map((c) => {
    const r = c.reporting?.capabilities;
    return {
      provider: c.manifest.id, display_name: c.manifest.displayName, connected: connected.has(c.manifest.id), reporting: !!r,
      ...(r ? {
        levels: r.levels, granularities: r.granularities, max_range_days: r.maxRangeDays, max_lookback_days: r.maxLookbackDays,
        clicks: r.clicks, conversions: r.conversions, async_jobs: r.asyncJobs,
      } : {}),
    };
  });
}
