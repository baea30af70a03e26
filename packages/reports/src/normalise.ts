import type { ReportRow } from "@trendgate/connector-ads";
import type { ReportOutputRow } from "@trendgate/contracts";

// A provider's normalised row becomes an output row: marked with its source (provider, ad account, currency), and
// with the ratios computed here the same way for every provider (never taken from a provider, whose definitions
// differ): ctr = clicks / impressions, cpc = spend / clicks in micros rounded down (BigInt: spend is int64).

export interface RowSource { provider: string; account_id: string; currency: string }

export function outputRow(src: RowSource, r: ReportRow): ReportOutputRow {
  const spend = BigInt(r.spend_micros);
  return {
    date: r.date, provider: src.provider, account_id: src.account_id,
    campaign_id: r.campaign_id, campaign_name: r.campaign_name, ad_group_id: r.ad_group_id, ad_group_name: r.ad_group_name,
    ad_id: r.ad_id, ad_name: r.ad_name, impressions: r.impressions, clicks: r.clicks, spend_micros: spend.toString(), currency: src.currency,
    conversions: r.conversions,
    ctr: r.impressions > 0 ? Math.round((r.clicks / r.impressions) * 1e6) / 1e6 : null,
    cpc_micros: r.clicks > 0 ? (spend / BigInt(r.clicks)).toString() : null,
  };
}
