import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { asApiError, get, isAbort, type ApiError, type Query } from "./api.ts";

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  /** Loads again; `quiet` keeps the current data on screen without a loading state (polling, refresh after an action). */
  reload: (quiet?: boolean) => Promise<void>;
  setData: (d: T | undefined) => void;
}

/** Runs `load` now and whenever `deps` change; the previous run is aborted. */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const current = useRef<AbortController | null>(null);
  const loadRef = useRef(load);
  loadRef.current = load;

  const reload = useCallback(async (quiet = false) => {
    current.current?.abort();
    const ac = new AbortController();
    current.current = ac;
    if (!quiet) setLoading(true);
    try {
      const d = await loadRef.current(ac.signal);
      if (ac.signal.aborted) return;
      setData(d);
      setError(null);
    } catch (err) {
      if (isAbort(err) || ac.signal.aborted) return;
      setError(asApiError(err));
    } finally {
      if (!ac.signal.aborted) setLoading(false);
    }
  }, []);

  useEffect(() => {
    setData(undefined);
    void reload();
    return () => current.current?.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);

  return { data, error, loading, reload, setData };
}

/** One page of a cursor listing: newest first, `next_cursor` null on the last page. */
export interface Page<T> { data: T[]; next_cursor: string | null }

/** Runs `fn` as the action `name`, reporting its error; `undefined` when it failed (`useAction().run`). */
export type RunAction = <R>(name: string, fn: () => Promise<R>) => Promise<R | undefined>;

export interface PagedList<T> {
  /** The first page; its `reload` (after it succeeds) drops the pages added with "Load more". */
  list: Loaded<Page<T>>;
  /** The first page's rows, then those of the pages added with "Load more". */
  rows: T[];
  /** The cursor of the next page; null or undefined when there is none (yet). */
  cursor: string | null | undefined;
  /** Adds the next page, run as the action "more" (its error is that action's error). */
  loadMore: () => Promise<void>;
  loadingMore: boolean;
  /** Replaces rows in every loaded page (after an action changed one). */
  mapRows: (fn: (row: T) => T) => void;
  /** Drops the pages added with "Load more" now, without waiting for a reload. */
  resetMore: () => void;
}

/**
 * A cursor listing shown as its first page plus the pages added with "Load more": GET `path` with `query` now and
 * whenever `deps` change, then `query` with the `cursor` of the next page. `run` is the page's `useAction().run`.
 */
export function usePagedList<T>(path: string, query: Query, deps: unknown[], run: RunAction): PagedList<T> {
  const [more, setMore] = useState<{ rows: T[]; cursor: string | null } | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const list = useLoad(async (signal) => {
    const p = await get<Page<T>>(path, query, signal);
    setMore(null);
    return p;
  }, deps);
  const rows = [...(list.data?.data ?? []), ...(more?.rows ?? [])];
  const cursor = more ? more.cursor : list.data?.next_cursor;

  const loadMore = async () => {
    if (!cursor) return;
    setLoadingMore(true);
    const p = await run("more", () => get<Page<T>>(path, { ...query, cursor }));
    if (p) setMore({ rows: [...(more?.rows ?? []), ...p.data], cursor: p.next_cursor });
    setLoadingMore(false);
  };
  const mapRows = (fn: (row: T) => T) => {
    list.setData(list.data && { ...list.data, data: list.data.data.map(fn) });
    setMore((m) => m && { ...m, rows: m.rows.map(fn) });
  };
  const resetMore = () => setMore(null);

  return { list, rows, cursor, loadMore, loadingMore, mapRows, resetMore };
}

/** Calls `fn` every `ms` while the page is visible. */
export function useInterval(fn: () => void, ms: number | null) {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    if (ms === null) return;
    const id = setInterval(() => { if (document.visibilityState === "visible") ref.current(); }, ms);
    return () => clearInterval(id);
  }, [ms]);
}

/**
 * A form's submission: whether it is running, its error (with `fields`, the validation messages by field path) and
 * `submit`, which runs the work once and keeps the error instead of throwing.
 */
export function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const submit = useCallback(async <R,>(work: () => Promise<R>): Promise<R | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await work();
    } catch (err) {
      setError(asApiError(err));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, fields: error?.fields ?? {}, submit };
}

/** An action's running state and its error, for buttons that call the API. */
export function useAction() {
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const run = useCallback(async <R,>(name: string, fn: () => Promise<R>, done?: (r: R) => string | void): Promise<R | undefined> => {
    setBusy(name);
    setError(null);
    setNotice(null);
    try {
      const r = await fn();
      const msg = done?.(r);
      if (msg) setNotice(msg);
      return r;
    } catch (err) {
      if (!isAbort(err)) setError(asApiError(err));
      return undefined;
    } finally {
      setBusy(null);
    }
  }, []);
  return { busy, error, notice, run, setError, setNotice };
}

/** Sets the document title for a page. */
export function useTitle(title: string) {
  useEffect(() => { document.title = `${title} · Trendgate console`; }, [title]);
}
