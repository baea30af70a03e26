// Types of scripts/redis-cluster.mjs, for the tests that start private clusters.
export interface LocalCluster {
  dir: string;
  ports: number[];
  /** REDIS_URL naming the cluster: redis+cluster://127.0.0.1:p1,127.0.0.1:p2,... */
  url: string;
  flushall(): void;
  kill(i: number): void;
  restart(i: number): Promise<void>;
  stop(): void;
}
/** Free loopback ports are picked when `ports` is not given. */
export function startCluster(opts?: { masters?: number; ports?: number[]; busPorts?: number[]; dir?: string }): Promise<LocalCluster>;
export function stopCluster(ports: number[]): void;
export function cliDir(port: number): string;
