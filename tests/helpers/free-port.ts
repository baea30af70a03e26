import fs from "node:fs";
import net from "node:net";

/** A loopback port free right now (the OS picks it; closed again before it is returned). */
export const freePort = () => new Promise<number>((resolve) => {
  const s = net.createServer().listen(0, "127.0.0.1", () => { const p = (s.address() as net.AddressInfo).port; s.close(() => resolve(p)); });
});

const isFree = (p: number) => new Promise<boolean>((r) => {
  const s = net.createServer().once("error", () => r(false)).listen(p, "127.0.0.1", () => s.close(() => r(true)));
});

/** The first port the OS hands out for outgoing connections and port-0 listens (Linux default 32768). */
function ephemeralLow(): number {
  try { return Number(fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32_768; } catch { return 32_768; }
}

/**
 * A base port with `n` free ports after it, all below the OS's ephemeral range: a range that is bound seconds later
 * (a demo builds first) must not be taken meanwhile by some other test's outgoing socket or port-0 listener.
 */
export async function freePortRange(n: number): Promise<number> {
  const span = Math.max(1_000, ephemeralLow() - 10_000 - n);
  for (;;) {
    const base = 10_000 + Math.floor(Math.random() * span);
    let ok = true;
    for (let p = base; p < base + n && ok; p++) ok = await isFree(p);
    if (ok) return base;
  }
}
