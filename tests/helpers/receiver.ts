import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Responder = (r: Received, n: number) => { status: number; headers?: Record<string, string>; body?: string; delayMs?: number };

/**
 * A real HTTP receiver on 127.0.0.1 that records every request. `respond` decides the answer per request
 * (n counts requests to that path, from 1); the default answers 204.
 */
export async function startReceiver(respond: Responder = () => ({ status: 204 })) {
  const received: Received[] = [];
  const perPath = new Map<string, number>();
  let responder = respond;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const r: Received = { at: Date.now(), path: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      received.push(r);
      const n = (perPath.get(r.path) ?? 0) + 1;
      perPath.set(r.path, n);
      const answer = responder(r, n);
      setTimeout(() => {
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body ?? "");
      }, answer.delayMs ?? 0);
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
    received,
    on: (path: string) => received.filter((r) => r.path === path),
    setResponder(fn: Responder) { responder = fn; },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
