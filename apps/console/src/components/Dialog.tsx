import { useEffect, useRef, useState } from "preact/hooks";
import { rememberFocus } from "../focus-return.ts";

interface Ask { title: string; message: string; confirmLabel: string; danger?: boolean }
interface Pending extends Ask { resolve: (ok: boolean) => void }

/**
 * A modal confirmation on the native <dialog> (focus kept inside, Escape cancels). Focus returns to the control that
 * opened it, or to the nearest one that still works when the confirmed action disables or removes it (focus-return.ts).
 */
function ConfirmDialog({ title, message, confirmLabel, danger, onClose }: Ask & { onClose: (ok: boolean) => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    const restore = rememberFocus();
    if (d && !d.open) d.showModal();
    d?.querySelector<HTMLButtonElement>("[data-cancel]")?.focus();
    return () => {
      // The rest of the page is inert while the modal is open: close it first. Focus moves once the page has
      // rendered what the answer changed (the action's busy state, say).
      if (d?.open) d.close();
      setTimeout(restore, 0);
    };
  }, []);
  return (
    <dialog ref={ref} class="dialog" aria-labelledby="confirm-title" aria-describedby="confirm-message"
      onCancel={(e) => { e.preventDefault(); onClose(false); }}>
      <h2 id="confirm-title">{title}</h2>
      <p id="confirm-message">{message}</p>
      <div class="actions">
        <button type="button" class="btn" data-cancel onClick={() => onClose(false)}>Cancel</button>
        <button type="button" class={`btn ${danger ? "btn-danger" : "btn-primary"}`} onClick={() => onClose(true)}>{confirmLabel}</button>
      </div>
    </dialog>
  );
}

/** `[dialog, confirm]`: render `dialog` somewhere in the page; `await confirm({...})` is true when confirmed. */
export function useConfirm() {
  const [pending, setPending] = useState<Pending | null>(null);
  const confirm = (a: Ask) => new Promise<boolean>((resolve) => setPending({ ...a, resolve }));
  const dialog = pending
    ? <ConfirmDialog {...pending} onClose={(ok) => { pending.resolve(ok); setPending(null); }} />
    : null;
  return [dialog, confirm] as const;
}
