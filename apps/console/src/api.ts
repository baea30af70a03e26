import { accessToken, endSession } from "./session.ts";
import type { Problem } from "./types.ts";

// One fetch wrapper for every API call: the bearer token, JSON in and out, problem+json errors as ApiError, a 401
// ending the session, and an Idempotency-Key on POSTs (the routes that create things replay on a retried key;
// the others ignore the header).

export class ApiError extends Error {
  constructor(readonly status: number, readonly problem: Problem | null, message: string) {
    super(message);
  }
  get code() { return this.problem?.code ?? null; }
  /** Field path -> message, for the validation errors of a form. */
  get fields(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const e of this.problem?.errors ?? []) if (!(e.path in out)) out[e.path] = e.message;
    return out;
  }
}

export type Query = Record<string, string | number | boolean | null | undefined>;

/** `?a=1&b=2` from the defined, non-empty values; "" when there are none. */
export function qs(q: Query = {}): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null && v !== "") p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : "";
}

/** crypto.randomUUID where available (secure contexts), else a v4 UUID from getRandomValues. */
export function uuid(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

interface Options { method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"; body?: unknown; query?: Query; signal?: AbortSignal }

async function send(path: string, opts: Options): Promise<Response> {
  const token = accessToken();
  if (!token) {
    endSession();
    throw new ApiError(401, null, "Your console session has ended.");
  }
  const method = opts.method ?? "GET";
  const headers: Record<string, string> = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
  if (method === "POST") headers["Idempotency-Key"] = uuid();
  let res: Response;
  try {
    res = await fetch(path + qs(opts.query), {
      method, headers, signal: opts.signal, credentials: "same-origin",
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError(0, null, "The server could not be reached. Check your connection and try again.");
  }
  if (res.ok) return res;
  let problem: Problem | null = null;
  try {
    if ((res.headers.get("content-type") ?? "").includes("json")) problem = (await res.json()) as Problem;
  } catch { /* not JSON */ }
  if (res.status === 401) endSession();
  throw new ApiError(res.status, problem, problem?.detail ?? problem?.title ?? `The server answered ${res.status} ${res.statusText}`.trim());
}

/** A JSON call; `undefined` for a 204. */
export async function api<T>(path: string, opts: Options = {}): Promise<T> {
  const res = await send(path, opts);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

export const get = <T>(path: string, query?: Query, signal?: AbortSignal) => api<T>(path, { query, signal });
export const post = <T>(path: string, body?: unknown, query?: Query) => api<T>(path, { method: "POST", body, query });

/** GET `path` and null on 404 (a connection that does not exist, a selection never saved). */
export async function getOrNull<T>(path: string, signal?: AbortSignal): Promise<T | null> {
  try {
    return await get<T>(path, undefined, signal);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

/** Downloads `path` with the bearer token and saves it via a Blob URL (a plain link would not carry the token). */
export async function download(path: string, fallbackName: string): Promise<void> {
  const res = await send(path, {});
  const blob = await res.blob();
  const cd = res.headers.get("content-disposition") ?? "";
  const name = /filename="?([^";]+)"?/.exec(cd)?.[1] ?? fallbackName;
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** What to show for an error: its message; aborts are not errors. */
export const isAbort = (err: unknown) => err instanceof DOMException && err.name === "AbortError";
export const asApiError = (err: unknown): ApiError =>
  err instanceof ApiError ? err : new ApiError(0, null, err instanceof Error ? err.message : String(err));
