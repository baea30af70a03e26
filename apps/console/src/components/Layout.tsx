import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import type { Route } from "../router.ts";
import { signOut } from "../session.ts";
import type { ConsoleAccess } from "../types.ts";
import { Time } from "./Time.tsx";

const NAV: { section: string; label: string }[] = [
  { section: "", label: "Overview" },
  { section: "webhooks", label: "Webhooks" },
  { section: "connections", label: "Connections" },
  { section: "operator", label: "Operator queue" },
  { section: "routing", label: "Routing" },
  { section: "on-call", label: "On call" },
  { section: "mutes", label: "Mutes" },
  { section: "ads", label: "Ads" },
  { section: "reports", label: "Reports" },
  { section: "activity", label: "Activity" },
];

/** Header, navigation and the main region; focus moves to the page's heading when the route changes. */
export function Layout({ route, session, children }: { route: Route; session: ConsoleAccess; children: ComponentChildren }) {
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  const section = route.parts[0] ?? "";
  useEffect(() => {
    if (first.current) { first.current = false; return; }
    // After the page renders its heading: move focus there so screen readers announce the new page.
    const t = setTimeout(() => (main.current?.querySelector<HTMLElement>("h1") ?? main.current)?.focus({ preventScroll: false }), 0);
    return () => clearTimeout(t);
  }, [route.path]);

  return (
    <div class="shell">
      <a class="skip-link" href="#main" onClick={(e) => { e.preventDefault(); main.current?.focus(); }}>Skip to content</a>
      <header class="topbar">
        <div class="topbar-inner">
          <a class="brand" href="#/">Trendgate console</a>
          <div class="session-bar">
            <p class="session-info">
              <span class="visually-hidden">Account </span><code title="Account id">{session.account_id}</code>
              <span class="muted"> · session ends <Time iso={session.expires_at} relative /></span>
            </p>
            <button type="button" class="btn btn-small" onClick={() => void signOut()}>Sign out</button>
          </div>
        </div>
        <nav aria-label="Console" class="nav">
          <ul>
            {NAV.map((n) => (
              <li key={n.section}>
                <a href={`#/${n.section}`} aria-current={n.section === section ? "page" : undefined}>{n.label}</a>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="main" ref={main} tabIndex={-1}>{children}</main>
    </div>
  );
}

/** A page's heading (focusable so route changes can move focus to it) and its lead text. */
export function PageHeader({ title, children, actions }: { title: ComponentChildren; children?: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <div class="page-header">
      <div>
        <h1 tabIndex={-1}>{title}</h1>
        {children && <p class="lead">{children}</p>}
      </div>
      {actions && <div class="actions">{actions}</div>}
    </div>
  );
}
