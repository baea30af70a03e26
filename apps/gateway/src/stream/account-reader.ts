import type { RedisConnection } from "@trendgate/queues";

/** One entry of an account's trend stream, ready to send: the message is serialized once for every socket. */
export interface StreamEntry {
  id: string;
  category: string;
  /** `{"id":"<stream id>","event":<TrendEvent>}` */
  message: string;
}

type Fields = string[];
type RawEntry = [id: string, fields: Fields];

const READ_COUNT = 200; // entries per XREAD/XRANGE round trip
const BLOCK_MS = 10_000; // XREAD BLOCK; the loop re-checks `stopped` between blocks (disconnect also aborts it)

/** Turns raw stream entries into StreamEntry; entries without a readable `event` field are skipped. */
export function toEntries(raw: RawEntry[]): StreamEntry[] {
  const out: StreamEntry[] = [];
  for (const [id, fields] of raw) {
    const i = fields.indexOf("event");
    const json = i >= 0 && i % 2 === 0 ? fields[i + 1] : undefined;
    if (!json) continue;
    let category: unknown;
    try { category = JSON.parse(json)?.category; } catch { continue; }
    if (typeof category !== "string") continue;
    out.push({ id, category, message: `{"id":${JSON.stringify(id)},"event":${json}}` });
  }
  return out;
}

/**
 * Reads one account's stream with XREAD BLOCK on a connection of its own (a blocked connection can do nothing else)
 * and hands each batch to `deliver`. Starts at the stream's current last entry, so `ready` resolving means every entry
 * added from then on will be delivered; anything older is for the client's own XRANGE replay.
 */
export class AccountReader {
  readonly ready: Promise<void>;
  private stopped = false;
  private cursor = "0-0";

  constructor(
    private readonly conn: RedisConnection,
    private readonly key: string,
    private readonly deliver: (entries: StreamEntry[]) => void,
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    this.ready = this.start();
  }

  private async start() {
    for (;;) {
      try {
        const last = (await this.conn.xrevrange(this.key, "+", "-", "COUNT", 1)) as RawEntry[];
        this.cursor = last[0]?.[0] ?? "0-0"; // an empty/missing stream: everything added later is new
        break;
      } catch (err) {
        if (this.stopped) return;
        this.onError(err);
        await sleep(1000);
      }
    }
    void this.loop();
  }

  private async loop() {
    while (!this.stopped) {
      try {
        const res = (await this.conn.xread("COUNT", READ_COUNT, "BLOCK", BLOCK_MS, "STREAMS", this.key, this.cursor)) as
          | [key: string, entries: RawEntry[]][]
          | null;
        if (this.stopped) return;
        const raw = res?.[0]?.[1];
        if (!raw?.length) continue;
        this.cursor = raw[raw.length - 1][0];
        this.deliver(toEntries(raw));
      } catch (err) {
        if (this.stopped) return;
        this.onError(err);
        await sleep(1000);
      }
    }
  }

  /** Stops reading and closes the dedicated connection (which also aborts a pending XREAD BLOCK). */
  stop() {
    this.stopped = true;
    this.conn.disconnect();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
