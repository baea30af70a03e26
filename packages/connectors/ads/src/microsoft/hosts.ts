/**
 * Microsoft Advertising's services live on sibling hosts (campaign.*, reporting.*, clientcenter.*): the service's
 * host from the Campaign Management URL, unless configured; a local server (tests) answers all of them itself.
 */
export function hostOf(baseUrl: string, override: string | undefined, sub: string): string {
  if (override) return override.replace(/\/+$/, "");
  const u = new URL(baseUrl);
  if (/^campaign\./i.test(u.hostname)) u.hostname = u.hostname.replace(/^campaign\./i, `${sub}.`);
  return u.origin + u.pathname.replace(/\/+$/, "");
}
