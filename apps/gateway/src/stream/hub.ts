import type { RedisConnection } from "@trendgate/queues";
import { AccountReader, type StreamEntry } from "./account-reader.ts";
import type { StreamClient } from "./client.ts";

interface AccountFeed {
  reader: AccountReader;
  clients: Set<StreamClient>;
}

/**
 * Fans out each account's stream to that account's sockets: one reader (and one blocking Redis connection) per
 * account with at least one client, started by the first and stopped when the last leaves. A client only ever joins
 * its own account's feed, so another account's events cannot reach it.
 */
export class StreamHub {
  private readonly feeds = new Map<string, AccountFeed>();

  constructor(
    private readonly opts: {
      streamKey: (accountId: string) => string;
      connect: () => RedisConnection; // a new dedicated connection for one reader
      onError?: (err: unknown, accountId: string) => void;
    },
  ) {}

  /** Registers a client (it receives every entry read from now on) and resolves once its feed's reader is positioned. */
  join(client: StreamClient): Promise<void> {
    const accountId = client.accountId;
    let feed = this.feeds.get(accountId);
    if (!feed) {
      const clients = new Set<StreamClient>();
      const reader = new AccountReader(this.opts.connect(), this.opts.streamKey(accountId), (entries: StreamEntry[]) => {
        for (const c of [...clients]) c.deliver(entries);
      }, (err) => this.opts.onError?.(err, accountId));
      feed = { reader, clients };
      this.feeds.set(accountId, feed);
    }
    feed.clients.add(client);
    return feed.reader.ready;
  }

  leave(client: StreamClient) {
    const feed = this.feeds.get(client.accountId);
    if (!feed || !feed.clients.delete(client)) return;
    if (feed.clients.size === 0) {
      this.feeds.delete(client.accountId);
      feed.reader.stop();
    }
  }

  /** Connected clients and running readers (for tests and metrics). */
  stats() {
    let clients = 0;
    for (const f of this.feeds.values()) clients += f.clients.size;
    return { readers: this.feeds.size, clients };
  }

  clients(): StreamClient[] {
    return [...this.feeds.values()].flatMap((f) => [...f.clients]);
  }

  stop() {
    for (const f of this.feeds.values()) f.reader.stop();
    this.feeds.clear();
  }
}
