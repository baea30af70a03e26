import http from "node:http";
import type net from "node:net";
import { OutboundClient, OutboundGuard } from "@trendgate/delivery";

// A receiver closes a kept-alive connection while it is idle; a request that our side had just put on that socket
// fails with a reset before the receiver read it. That is the keep-alive race, not the receiver's answer: the
// attempt must not be recorded as a failure the receiver never saw.

const client = () => new OutboundClient({ guard: new OutboundGuard(["127.0.0.1/32"]), connectTimeoutMs: 1000, timeoutMs: 3000, maxResponseBytes: 1024, userAgent: "test" });

test("a request put on a kept-alive socket the receiver has just closed goes again on a new connection", async () => {
  const perSocket = new Map<net.Socket, number>();
  let connections = 0;
  const server = http.createServer((req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    // The second request on a connection meets a socket the receiver is closing: no answer, just the close.
    if (n === 2) return req.socket.destroy();
    req.resume();
    req.on("end", () => { res.writeHead(204); res.end(); });
  });
  server.on("connection", () => { connections++; });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hook`;
  try {
    const c = client();
    expect((await c.request("POST", url, { body: "{}" })).status).toBe(204);
    const second = await c.request("POST", url, { body: "{}" });
    expect(second.error).toBeNull();
    expect(second.status).toBe(204);
    expect(connections).toBe(2); // the reset socket was dropped and a fresh one opened
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test("a reset on a fresh connection is the receiver's failure and is not sent again", async () => {
  let requests = 0;
  const server = http.createServer((req) => { requests++; req.socket.destroy(); });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hook`;
  try {
    const r = await client().request("POST", url, { body: "{}" });
    expect(r.status).toBeNull();
    expect(r.error?.code).toBe("ECONNRESET");
    expect(requests).toBe(1);
  } finally {
    await new Promise((r) => server.close(r));
  }
});
