import type { ComponentChildren } from "preact";

export function EmptyState({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children && <p class="empty-hint">{children}</p>}
    </div>
  );
}

export function Loading({ label = "Loading…" }: { label?: string }) {
  return <p class="loading" aria-busy="true" role="status">{label}</p>;
}

/** "Load more" for cursor pages. */
export function LoadMore({ cursor, busy, onMore }: { cursor: string | null | undefined; busy: boolean; onMore: () => void }) {
  if (!cursor) return null;
  return (
    <div class="load-more">
      <button type="button" class="btn" onClick={onMore} disabled={busy} aria-busy={busy}>{busy ? "Loading…" : "Load more"}</button>
    </div>
  );
}
