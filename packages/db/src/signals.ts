import type { Signal } from "@trendgate/contracts";
import type { Db } from "./client.ts";
import { newId } from "./ids.ts";

/** Stores a batch of validated signals; a signal already stored (same account, source, id) is skipped. */
export async function insertSignals(db: Db, accountId: string, signals: Signal[]): Promise<number> {
  const res = await db.signal.createMany({
    data: signals.map((s) => ({
      id: newId("sig"),
      accountId,
      source: s.source,
      externalId: s.id,
      topic: s.topic,
      category: s.category,
      count: s.count,
      sentiment: s.sentiment ?? null,
      observedAt: new Date(s.observed_at),
      link: s.link ?? null,
    })),
    skipDuplicates: true,
  });
  return res.count;
}
