import dns from "node:dns";
import ipaddr from "ipaddr.js";

/**
 * Outbound destination guard, shared by webhooks and every connector. By default only public unicast addresses are
 * reachable: loopback, private, link-local (cloud metadata), unique-local, CGNAT, multicast and reserved ranges are
 * refused. The check runs on the resolved IP at connection time (the `lookup` used by the HTTP agent), so a host
 * name that resolves, or re-resolves (DNS rebinding), to a blocked address is refused too. OUTBOUND_ALLOWLIST names
 * hosts and CIDRs that may be reached anyway (self-hosted receivers, tests).
 *
 * An IPv6 address that carries an IPv4 address (IPv4-mapped, IPv4-translated, IPv4-compatible, NAT64, 6to4,
 * Teredo) is judged by the IPv4 address it carries: a translator or relay on the path would deliver to that IPv4
 * host, so a private one is refused and a public one passes like the plain IPv4 address would. The NAT64 local-use
 * prefix (64:ff9b:1::/48) is refused outright: where it carries the address depends on the operator's prefix length,
 * and its translator is on a private network by definition. The allow-list matches the address as written, and for
 * IPv4-mapped addresses also the IPv4 address (they are the same socket destination).
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
    if (ip.kind() === "ipv6") {
      const carried = carriedIPv4(ip as ipaddr.IPv6);
      if (carried === "unknown") return "rfc6052 local-use";
      if (carried) {
        const blocked = carried.addresses.map((v4) => v4.range()).find((r) => r !== "unicast");
        return blocked ? `${blocked} via ${carried.form}` : null;
      }
    }
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

/**
 * The IPv4 address(es) an IPv6 address carries, by the transition form it is written in; "unknown" when it carries
 * one at a position that cannot be known (NAT64 local-use); null when it is a plain IPv6 address. IPv4-mapped is
 * converted by the caller. :: and ::1 are left to their own ranges (unspecified, loopback).
 */
function carriedIPv4(ip: ipaddr.IPv6): { form: string; addresses: ipaddr.IPv4[] } | "unknown" | null {
  const p = ip.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 6) && (p[6] !== 0 || p[7] > 1)) return { form: "ipv4Compatible", addresses: [v4(p[6], p[7])] };
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return { form: "rfc6145", addresses: [v4(p[6], p[7])] };
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return { form: "nat64", addresses: [v4(p[6], p[7])] };
  if (p[0] === 0x64 && p[1] === 0xff9b && p[2] === 1) return "unknown";
  if (p[0] === 0x2002) return { form: "6to4", addresses: [v4(p[1], p[2])] };
  // Teredo: the server's address, then the client's, stored inverted (RFC 4380).
  if (p[0] === 0x2001 && p[1] === 0) return { form: "teredo", addresses: [v4(p[2], p[3]), v4(~p[6] & 0xffff, ~p[7] & 0xffff)] };
  return null;
}
