import http from "node:http";
import type { AddressInfo } from "node:net";
import { bodyHandlers, listenLocal, type BodyHandler } from "./listen.ts";

// How an ads provider's API fails around a write, for its stand-in to do on request (each stand-in says which of its
// requests are writes). The real APIs sit behind front ends (Google's GFE, Meta's and LinkedIn's edges, Azure Front
// Door, ...) whose own failures are HTML pages, not the API's JSON errors, and whose deadline can pass while the
// backend is still writing:
// - after(kind): the write is applied, then its answer is lost: the connection is cut ("reset") or the front end
//   answers a 502 page ("bad_gateway"). Sending it again blindly would repeat a write that was made.
// - late(ms): the front end gives up first (a 504 page at once) and the backend applies the write ms later: a retry
//   that reads before then sees nothing yet and writes again, so the same write reaches the provider twice.
// - restartWindow(ms, status): every request answers a 502 or 503 page for ms and nothing is applied (a deploy or a
//   backend restarting behind a front end that stays up).
// - restart(ms): connections refused for ms, then the same port answers with everything kept.

export type AfterWriteFault = "reset" | "bad_gateway";

export interface PeerFaults {
  /** The next n writes are applied, then answered with `kind` instead of the provider's answer. */
  after(kind: AfterWriteFault, n?: number): void;
  /** The next n writes are answered 504 at once and applied `ms` later. */
  late(ms: number, n?: number): void;
  /** Every request answers `status` with an HTML page for `ms`, nothing applied. */
  restartWindow(ms: number, status?: 502 | 503): void;
  /** Open connections dropped, new ones refused for downMs, then the same port answers with the state kept. */
  restart(downMs: number): Promise<void>;
  /** How often each fault fired: writes whose answer was replaced, late writes applied, requests refused by a window. */
  fired: { after: number; late: number; window: number };
  /** Resolves once every late write has been applied. */
  settled(): Promise<void>;
}

const PAGES: Record<number, string> = { 502: "502 Bad Gateway", 503: "503 Service Unavailable", 504: "504 Gateway Timeout" };

/** A front end's error page: HTML, no API error body, no Retry-After. */
function page(res: http.ServerResponse, status: 502 | 503 | 504) {
  res.writeHead(status, { "content-type": "text/html; charset=UTF-8", connection: "close" });
  res.end(`<!DOCTYPE html><html><head><title>${PAGES[status]}</title></head><body><h1>${PAGES[status]}</h1></body></html>`);
}

/**
 * Holds what the handler answers on `res` and hands its status to `decide` with a way to send it as it was, so the
 * answer of a write that was applied can be replaced.
 */
function intercept(res: http.ServerResponse, decide: (status: number, send: () => void) => void) {
  const real = { writeHead: res.writeHead, write: res.write, end: res.end };
  let head: unknown[] | null = null;
  const chunks: unknown[] = [];
  res.writeHead = ((...args: unknown[]) => { head = args; return res; }) as typeof res.writeHead;
  res.write = ((chunk: unknown) => { chunks.push(chunk); return true; }) as typeof res.write;
  res.end = ((chunk?: unknown) => {
    if (chunk !== undefined && typeof chunk !== "function") chunks.push(chunk);
    Object.assign(res, real);
    const status = typeof head?.[0] === "number" ? head[0] : res.statusCode;
    decide(status, () => {
      if (head) (res.writeHead as (...a: unknown[]) => void)(...head);
      for (const c of chunks) res.write(c as string);
      res.end();
    });
    return res;
  }) as typeof res.end;
}

/** Puts the faults in front of a bodyServer's handler; `isWrite` names the requests that change the provider's state
 * (not its dry runs). */
export function peerFaults(server: http.Server, isWrite: (method: string, url: URL, body: string) => boolean): PeerFaults {
  const inner = bodyHandlers.get(server);
  if (!inner) throw new Error("peerFaults needs a server made by bodyServer");
  let afterWrite: { kind: AfterWriteFault; n: number } = { kind: "reset", n: 0 };
  let late = { ms: 0, n: 0 };
  let window = { until: 0, status: 503 as 502 | 503 };
  const pending = new Set<Promise<void>>();

  const handler: BodyHandler = (req, res, url, body) => {
    if (Date.now() < window.until) { faults.fired.window++; req.resume(); return page(res, window.status); }
    if (!isWrite(req.method ?? "GET", url, body)) return inner(req, res, url, body);
    if (late.n > 0) {
      late.n--;
      page(res, 504);
      const applied = new Promise((r) => setTimeout(r, late.ms))
        .then(() => inner(req, new http.ServerResponse(req), url, body)) // nobody hears this answer
        .then(() => { faults.fired.late++; pending.delete(applied); });
      pending.add(applied);
      return;
    }
    if (afterWrite.n > 0) {
      intercept(res, (status, send) => {
        // Refused: nothing was applied. (TikTok refuses with a 200 and a code: its refusals can be replaced too.)
        if (status < 200 || status >= 300 || afterWrite.n <= 0) return send();
        afterWrite.n--;
        faults.fired.after++;
        if (afterWrite.kind === "reset") res.socket?.destroy();
        else page(res, 502);
      });
    }
    return inner(req, res, url, body);
  };
  bodyHandlers.set(server, handler);

  const faults: PeerFaults = {
    fired: { after: 0, late: 0, window: 0 },
    after(kind, n = 1) { afterWrite = { kind, n }; },
    late(ms, n = 1) { late = { ms, n }; },
    restartWindow(ms, status = 503) { window = { until: Date.now() + ms, status }; },
    async restart(downMs) {
      const port = (server.address() as AddressInfo).port;
      await new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
      await new Promise((r) => setTimeout(r, downMs));
      await listenLocal(server, port);
    },
    async settled() { while (pending.size) await Promise.all([...pending]); },
  };
  return faults;
}
