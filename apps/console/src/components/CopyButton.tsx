import { useState } from "preact/hooks";

/**
 * Copies `text` to the clipboard; where the clipboard API is not available (an http:// page, a refused permission),
 * selects the text in `targetId` so it can be copied by hand.
 */
export function CopyButton({ text, targetId, label = "Copy" }: { text: string; targetId: string; label?: string }) {
  const [status, setStatus] = useState("");
  const selectTarget = () => {
    const el = document.getElementById(targetId);
    if (!el) return false;
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) { el.focus(); el.select(); return true; }
    const sel = getSelection();
    sel?.selectAllChildren(el);
    return !!sel;
  };
  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error("no clipboard");
      await navigator.clipboard.writeText(text);
      setStatus("Copied to the clipboard.");
    } catch {
      setStatus(selectTarget() ? "Selected: press Ctrl+C (⌘C on a Mac) to copy." : "Select the text and copy it.");
    }
  };
  return (
    <span class="copy">
      <button type="button" class="btn" onClick={copy} aria-describedby={`${targetId}-copy-status`}>{label}</button>
      <span class="copy-status" id={`${targetId}-copy-status`} role="status">{status}</span>
    </span>
  );
}
