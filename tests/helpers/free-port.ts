import net from "node:net";

/** A loopback port free right now (the OS picks it; closed again before it is returned). */
export const freePort = () => new Promise<number>((resolve) => {
  const s = net.createServer().listen(0, "127.0.0.1", () => { const p = (s.address() as net.AddressInfo).port; s.close(() => resolve(p)); });
});
