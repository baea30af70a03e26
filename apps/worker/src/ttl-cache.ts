/** A small per-process cache with expiry; concurrent misses for one key share a single load. */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: Promise<V>; at: number }>();

  constructor(private readonly ttlMs: number) {}

  get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && Date.now() - hit.at < this.ttlMs) return hit.value;
    const value = load();
    this.entries.set(key, { value, at: Date.now() });
    value.catch(() => this.entries.delete(key));
    if (this.entries.size > 10_000) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }

  delete(key: string) { this.entries.delete(key); }
}
