import net from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A TCP proxy on 127.0.0.1 in front of a server (e.g. Postgres), to simulate its outage: down() cuts every open
 * connection and refuses new ones until up(). Clients pointed at it see what they see when the server stops.
 */
export interface TcpProxy { port: number; down(): void; up(): void; close(): Promise<void> }

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let refusing = false;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (refusing) return client.destroy();
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) { open.add(s); s.on("close", () => open.delete(s)); s.on("error", () => {}); }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    down() { refusing = true; for (const s of open) s.destroy(); },
    up() { refusing = false; },
    close: () => new Promise<void>((r) => { for (const s of open) s.destroy(); server.close(() => r()); }),
  };
}
