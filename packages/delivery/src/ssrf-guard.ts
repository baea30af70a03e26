import dns from "node:dns";
import ipaddr from "ipaddr.js";

/**
 * Outbound destination guard, shared by webhooks and every connector. By default only public unicast addresses are
 * reachable: loopback, private, link-local (cloud metadata), unique-local, CGNAT, multicast and reserved ranges are
 * refused. The check runs on the resolved IP at connection time (the `lookup` used by the HTTP agent), so a host
 * name that resolves, or re-resolves (DNS rebinding), to a blocked address is refused too. OUTBOUND_ALLOWLIST names
 * hosts and CIDRs that may be reached anyway (self-hosted receivers, tests).
 */
export class BlockedDestinationError extends Error {
  readonly code = "ERR_BLOCKED_DESTINATION";
  constructor(host: string, address: string, readonly range: string) {
    super(`${host} resolves to ${address} (${range}), which is not a public address; add it to OUTBOUND_ALLOWLIST to allow it`);
  }
}

type Lookup = typeof dns.lookup;

export class OutboundGuard {
  private readonly hosts = new Set<string>();
  private readonly cidrs: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];

  constructor(allowlist: string[], private readonly resolve: Lookup = dns.lookup) {
    for (const entry of allowlist.map((e) => e.trim().toLowerCase()).filter(Boolean)) {
      if (entry.includes("/")) this.cidrs.push(ipaddr.parseCIDR(entry));
      else if (ipaddr.isValid(entry)) { const a = ipaddr.parse(entry); this.cidrs.push([a, a.kind() === "ipv4" ? 32 : 128]); }
      else this.hosts.add(entry);
    }
  }

  /** Why an address may not be reached, or null when it may. */
  blockedRange(address: string): string | null {
    let ip = ipaddr.parse(address);
    if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
    if (this.cidrs.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))) return null;
    const range = ip.range();
    return range === "unicast" ? null : range;
  }

  /** Checks a URL before any connection: IP-literal hosts never go through `lookup`. */
  checkUrl(url: URL): void {
    const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
    if (this.hosts.has(host) || !ipaddr.isValid(host)) return;
    const range = this.blockedRange(host);
    if (range) throw new BlockedDestinationError(host, host, range);
  }

  /** A drop-in for dns.lookup that refuses blocked addresses (used as the HTTP client's dnsLookup). */
  readonly lookup = ((hostname: string, options: any, callback: any) => {
    if (typeof options === "function") { callback = options; options = {}; }
    const allowedHost = this.hosts.has(hostname.toLowerCase());
    this.resolve(hostname, { ...options, all: true }, (err, addresses: any) => {
      if (err) return callback(err);
      const list = addresses as dns.LookupAddress[];
      if (!allowedHost) {
        for (const a of list) {
          const range = this.blockedRange(a.address);
          if (range) return callback(Object.assign(new BlockedDestinationError(hostname, a.address, range), { hostname }));
        }
      }
      if (options.all) callback(null, list);
      else callback(null, list[0].address, list[0].family);
    });
  }) as unknown as Lookup;
}
