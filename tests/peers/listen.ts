import type http from "node:http";
import type { AddressInfo } from "node:net";

/** Starts a provider stand-in on a free port of 127.0.0.1 and returns its base URL. */
export async function listenLocal(server: http.Server): Promise<string> {
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
