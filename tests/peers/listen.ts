import http, { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** Starts a provider stand-in on a free port of 127.0.0.1 and returns its base URL. */
export async function listenLocal(server: http.Server): Promise<string> {
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An http server that reads each request whole, then hands its method, URL and body to `handle`. */
export function bodyServer(handle: (req: http.IncomingMessage, res: http.ServerResponse, url: URL, body: string) => void): http.Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handle(req, res, new URL(req.url ?? "/", "http://127.0.0.1"), Buffer.concat(chunks).toString("utf8")));
  });
}
