import { Cluster, type ClusterNode } from "ioredis";

type Options = NonNullable<ConstructorParameters<typeof Cluster>[1]>;

/** How long a cluster client may sit closed with no node before it is seen as orphaned. */
const ORPHANED_AFTER_MS = 1000;

/**
 * An ioredis Cluster that cannot get stuck closed. ioredis decides what follows a "close" (reconnect, or "end" after
 * a manual disconnect) in a listener that each connect() registers once. BullMQ's recovery of a worker's blocking
 * cluster client (after a master restarts) calls disconnect() and connect() back to back; when the old nodes' "end"
 * events come before the new connect() gets going, the pool drains with that listener already spent, and connect()
 * then aborts: the client stays "close" with no nodes, for good. Its queue's worker then never takes another job, and
 * closing it waits forever for an "end" that never comes (seen here after a kill -9 of a master, under load).
 * So: a client still "close" or "disconnecting" with an empty pool a second later gets the missing decision.
 * Duplicates (BullMQ's blocking connections) are healing clusters too.
 */
export class HealingCluster extends Cluster {
  constructor(startupNodes: ClusterNode[], options: Options = {}) {
    super(startupNodes, options as never); // (the reply-mapping generic of ioredis 6 is left at its default)
    const check = () => {
      if ((this.status === "close" || this.status === "disconnecting") && this.nodes("all").length === 0)
        (this as unknown as { handleCloseEvent(): void }).handleCloseEvent();
    };
    const arm = () => { setTimeout(check, ORPHANED_AFTER_MS).unref(); };
    this.on("close", arm);
    this.on("disconnecting", arm);
  }

  // ioredis' own duplicate(), making a HealingCluster.
  override duplicate(overrideStartupNodes: ClusterNode[] = [], overrideOptions: Options = {}): any {
    const self = this as unknown as { startupNodes: ClusterNode[] };
    const options: Options = { ...this.options, ...overrideOptions } as Options;
    if (this.options.redisOptions && overrideOptions.redisOptions)
      options.redisOptions = { ...this.options.redisOptions, ...overrideOptions.redisOptions };
    return new HealingCluster(overrideStartupNodes.length ? overrideStartupNodes : self.startupNodes.slice(0), options);
  }
}
