export interface DestinationLimits {
  /** Requests at once to one endpoint (a webhook subscription): what one slow or hanging endpoint can hold. */
  perEndpoint: number;
  /** Requests at once to one host:port, whatever the endpoint: the safety net for a host that is slow as a whole. */
  perHost: number;
}

/**
 * Caps concurrent requests in this process per endpoint and per destination host, so one slow receiver cannot hold
 * every worker slot: a job over either cap is put back (delayed briefly) instead of waiting, and others keep flowing.
 *
 * Per endpoint first: many customers point at the same automation or chat host (one host:port, many URLs), so a
 * host-only cap let one hanging URL take all of its host's slots and stall every neighbour until its timeouts. Now
 * a hanging endpoint holds at most `perEndpoint` slots, and its neighbours share the rest of the host's `perHost`.
 * The fleet-wide caps are these limits times the number of worker processes.
 */
export class DestinationLimiter {
  private readonly endpoints = new Map<string, number>();
  private readonly hosts = new Map<string, number>();

  constructor(private readonly limits: DestinationLimits) {}

  /** Takes one slot of both the endpoint and its host, or neither. */
  tryAcquire(endpoint: string, host: string): boolean {
    const e = this.endpoints.get(endpoint) ?? 0, h = this.hosts.get(host) ?? 0;
    if (e >= this.limits.perEndpoint || h >= this.limits.perHost) return false;
    this.endpoints.set(endpoint, e + 1);
    this.hosts.set(host, h + 1);
    return true;
  }

  release(endpoint: string, host: string) {
    dec(this.endpoints, endpoint);
    dec(this.hosts, host);
  }

  /** Requests in flight now to an endpoint and to a host (for metrics and tests). */
  inFlight(endpoint: string, host: string) {
    return { endpoint: this.endpoints.get(endpoint) ?? 0, host: this.hosts.get(host) ?? 0 };
  }
}

function dec(m: Map<string, number>, k: string) {
  const n = (m.get(k) ?? 1) - 1;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
}
