// Where keyboard focus goes when a dialog closes. Back to the control that opened it, as long as that control can
// still take focus: a confirmed action often disables it while it runs, or removes it (Unmute removes its row,
// Disconnect its button), and focus on a disabled or removed element falls to <body>, the top of the page for a
// keyboard or screen-reader user. Then focus goes to the nearest control that can take it, in the closest part of the
// page that is still there (its row, its toolbar, its card), or to that part itself when it holds no control.

const FOCUSABLE = 'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])';
// Parts of the page that can be focused themselves (with tabindex -1) when nothing in them can: named by a heading.
const CONTAINER = "section, [role=region], main";
// The focus is watched this long after a dialog closes (an action's request and the reload after it).
const WATCH_MS = 60_000;

/** Whether `e` can take focus now: on the page, enabled, shown, outside a dialog. */
const usable = (e: Element | null): e is HTMLElement =>
  e instanceof HTMLElement && e.isConnected && !e.matches(":disabled") && e.getAttribute("aria-disabled") !== "true" &&
  !e.closest("dialog, [inert], [hidden]") && e.getClientRects().length > 0;

/**
 * Remembers the focused element before a dialog opens; call the answer when the dialog has closed. It focuses that
 * element, or the nearest usable one, and keeps doing so while the element it chose is disabled or removed by what the
 * dialog started, until the user moves focus (or WATCH_MS pass).
 */
export function rememberFocus(): () => void {
  const opener = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : null;
  if (!opener) return () => undefined;
  // The page's controls in order as they were: "nearest" is measured in this order, the ones after the opener first.
  const known = [...document.querySelectorAll(FOCUSABLE)];
  const at = known.indexOf(opener);
  const chain: HTMLElement[] = [];
  for (let e = opener.parentElement; e; e = e.parentElement) chain.push(e);
  const distance = (e: Element) => {
    const i = known.indexOf(e);
    return i < 0 || at < 0 ? Number.MAX_SAFE_INTEGER : i > at ? i - at : at - i + 0.5;
  };

  const fallback = (): HTMLElement | null => {
    for (const box of chain) {
      if (!box.isConnected) continue;
      const live = [...box.querySelectorAll(FOCUSABLE)].filter(usable);
      if (live.length) return live.reduce((a, b) => (distance(b) < distance(a) ? b : a));
      if (box.matches(CONTAINER) && !box.closest("[inert], [hidden]")) {
        if (!box.hasAttribute("tabindex")) box.tabIndex = -1;
        return box;
      }
    }
    return null;
  };

  return () => {
    let target = usable(opener) ? opener : fallback();
    target?.focus();
    // What the confirmed action does next (disable the control while it runs, remove it) comes after the close.
    const lost = () => {
      const active = document.activeElement;
      if (!target || usable(target) || (active !== target && active !== document.body && active !== null)) return;
      target = fallback();
      target?.focus();
    };
    const observer = new MutationObserver(lost);
    const stop = () => {
      observer.disconnect();
      clearTimeout(timer);
      document.removeEventListener("focusin", moved);
      window.removeEventListener("hashchange", stop);
    };
    const moved = (e: FocusEvent) => { if (e.target !== target) stop(); };
    const timer = setTimeout(stop, WATCH_MS);
    observer.observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ["disabled", "hidden", "inert", "aria-disabled"] });
    document.addEventListener("focusin", moved);
    window.addEventListener("hashchange", stop);
  };
}
