import type { ApiError } from "../api.ts";

/** An API error for people: its detail, the fields it names, and the request id for support. */
export function ErrorBanner({ error, onDismiss }: { error: ApiError | null | undefined; onDismiss?: () => void }) {
  if (!error) return null;
  const fields = error.problem?.errors ?? [];
  return (
    <div class="banner banner-error" role="alert">
      <div class="banner-body">
        <p class="banner-title">{error.message}</p>
        {fields.length > 0 && (
          <ul class="banner-list">
            {fields.map((f) => <li key={f.path}><code>{f.path}</code>: {f.message}</li>)}
          </ul>
        )}
        {error.problem?.request_id && <p class="muted small">Request id {error.problem.request_id}</p>}
      </div>
      {onDismiss && <button type="button" class="btn btn-quiet" onClick={onDismiss}>Dismiss</button>}
    </div>
  );
}

/** A short success or progress message, announced politely. */
export function Notice({ message }: { message: string | null | undefined }) {
  return <p class={message ? "banner banner-ok" : "visually-hidden"} role="status">{message ?? ""}</p>;
}
