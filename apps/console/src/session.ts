import type { ConsoleAccess, Problem } from "./types.ts";

// The console's session: exchanged once from the one-time link's token, kept in sessionStorage (this tab only),
// ended by a 401 on any call, by its expiry, when none is stored, or by signing out.

const KEY = "trendgate.console";

export type SessionState =
  | { kind: "exchanging" }
  | { kind: "ready"; session: ConsoleAccess }
  | { kind: "link_expired" }
  | { kind: "exchange_failed"; detail: string }
  | { kind: "ended" }
  /** Opened without a link and with no session in this tab: never signed in here, so nothing "ended". */
  | { kind: "no_session" }
  | { kind: "signing_out" }
  | { kind: "signed_out" };

let state: SessionState = { kind: "ended" };
const listeners = new Set<(s: SessionState) => void>();
let expiryTimer: ReturnType<typeof setTimeout> | undefined;

function set(next: SessionState) {
  state = next;
  clearTimeout(expiryTimer);
  if (next.kind === "ready") {
    const left = Date.parse(next.session.expires_at) - Date.now();
    // setTimeout takes at most 2^31-1 ms; a session that long is re-checked on the next call's 401 anyway.
    if (Number.isFinite(left) && left < 2 ** 31 - 1) expiryTimer = setTimeout(endSession, Math.max(0, left));
  }
  for (const l of listeners) l(next);
}

export const sessionState = () => state;
export function onSession(l: (s: SessionState) => void) {
  listeners.add(l);
  return () => void listeners.delete(l);
}

/** The access token of the live session, or null. */
export const accessToken = () => (state.kind === "ready" ? state.session.access_token : null);

export function endSession() {
  try { sessionStorage.removeItem(KEY); } catch { /* storage unavailable: nothing stored */ }
  if (state.kind === "ready" || state.kind === "exchanging") set({ kind: "ended" });
}

/**
 * Signs out: forgets the stored session, then revokes it on the server (a console session may revoke itself). A
 * failed revocation (network, 401) still ends the session here: the person asked to leave, and nothing is kept.
 */
export async function signOut(): Promise<void> {
  if (state.kind !== "ready") return;
  const { session_id, access_token } = state.session;
  try { sessionStorage.removeItem(KEY); } catch { /* storage unavailable: nothing stored */ }
  // Not "ready" from here on: the pages unmount (no more calls that could end the session as "ended" meanwhile).
  set({ kind: "signing_out" });
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 10_000);
  try {
    await fetch(`/api/console/sessions/${encodeURIComponent(session_id)}`, {
      method: "DELETE", headers: { Authorization: `Bearer ${access_token}` }, credentials: "same-origin", signal: ac.signal,
    });
  } catch { /* unreachable or too slow: the session is forgotten here all the same */ }
  clearTimeout(timer);
  set({ kind: "signed_out" });
}

/** Whether this tab holds a session at all (an expired one included). */
function hadSession(): boolean {
  try { return sessionStorage.getItem(KEY) !== null; } catch { return false; }
}

function stored(): ConsoleAccess | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return null;
    const s = JSON.parse(raw) as Partial<ConsoleAccess>;
    if (typeof s.access_token !== "string" || typeof s.expires_at !== "string") return null;
    if (!(Date.parse(s.expires_at) > Date.now())) return null;
    return s as ConsoleAccess;
  } catch {
    return null;
  }
}

/**
 * Starts the session: a `#token=` in the URL is exchanged (then removed from the URL and history), else the stored
 * session is used, else the session has ended.
 */
export async function bootSession(): Promise<void> {
  const hash = location.hash;
  if (!hash.startsWith("#token=")) {
    const s = stored();
    set(s ? { kind: "ready", session: s } : hadSession() ? { kind: "ended" } : { kind: "no_session" });
    return;
  }
  const token = decodeURIComponent(hash.slice("#token=".length));
  // The token works once: take it out of the address bar (and this history entry) before anything else runs.
  history.replaceState(null, "", location.pathname + location.search + "#/");
  set({ kind: "exchanging" });
  let res: Response;
  try {
    res = await fetch("/api/console/sessions/exchange", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ token }),
      credentials: "same-origin",
    });
  } catch {
    set({ kind: "exchange_failed", detail: "The server could not be reached. Check your connection and open the link again." });
    return;
  }
  if (res.ok) {
    const session = (await res.json()) as ConsoleAccess;
    try { sessionStorage.setItem(KEY, JSON.stringify(session)); } catch { /* kept in memory for this page only */ }
    set({ kind: "ready", session });
    return;
  }
  if (res.status === 401 || res.status === 404 || res.status === 410) {
    set({ kind: "link_expired" });
    return;
  }
  let detail = `The server answered ${res.status}.`;
  try {
    const p = (await res.json()) as Problem;
    detail = p.detail ?? p.title ?? detail;
  } catch { /* not JSON */ }
  set({ kind: "exchange_failed", detail });
}
