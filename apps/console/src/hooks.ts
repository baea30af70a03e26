import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { asApiError, isAbort, type ApiError } from "./api.ts";

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
