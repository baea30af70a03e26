/**
 * Caps concurrent requests per destination host in this process, so one slow receiver cannot hold every worker
 * slot: a job over the cap is put back (delayed briefly) instead of waiting, and other destinations keep flowing.
 * The fleet-wide cap is this limit times the number of worker processes.
 */
export class DestinationLimiter {
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly limit: number) {}

  tryAcquire(host: string): boolean {
    const n = this.inFlight.get(host) ?? 0;
    if (n >= this.limit) return false;
    this.inFlight.set(host, n + 1);
    return true;
  }

  release(host: string) {
    const n = (this.inFlight.get(host) ?? 1) - 1;
    if (n <= 0) this.inFlight.delete(host);
    else this.inFlight.set(host, n);
  }
}
