import http, { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** How a stand-in is started: on a fixed port (the sandbox) or a free one (tests), with a fixed app or a random one. */
export interface StandInOptions {
  /** 0 or unset: a free port chosen by the OS. */
  port?: number;
  /** The OAuth app registered at the stand-in; unset: random credentials. */
  app?: { clientId: string; clientSecret: string };
}

/** Starts a provider stand-in on 127.0.0.1 (a free port unless one is given) and returns its base URL. */
export async function listenLocal(server: http.Server, port = 0): Promise<string> {
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => { server.off("error", reject); resolve(); });
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export type BodyHandler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL, body: string) => void;

/** Each bodyServer's handler, so that peerFaults (faults.ts) can put itself in front of it. */
export const bodyHandlers = new WeakMap<http.Server, BodyHandler>();

/** An http server that reads each request whole, then hands its method, URL and body to `handle`. */
export function bodyServer(handle: BodyHandler): http.Server {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => bodyHandlers.get(server)!(req, res, new URL(req.url ?? "/", "http://127.0.0.1"), Buffer.concat(chunks).toString("utf8")));
  });
  bodyHandlers.set(server, handle);
  return server;
}
