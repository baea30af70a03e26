import type { ComponentChildren } from "preact";
import { useEffect } from "preact/hooks";
import { PageHeader } from "../components/Layout.tsx";
import { useTitle } from "../hooks.ts";

/** A full-page message before or after a session (opening, expired link, ended). */
export function SessionMessage({ title, alert = false, busy = false, children }: {
  title: string; alert?: boolean; busy?: boolean; children?: ComponentChildren;
}) {
  useEffect(() => { document.title = "Trendgate console"; }, []);
  return (
    <div class="session-page">
      <main class="session-card" aria-busy={busy}>
        <p class="brand">Trendgate console</p>
        <div role={alert ? "alert" : "status"}>
          <h1>{title}</h1>
          {children && <p>{children}</p>}
        </div>
      </main>
    </div>
  );
}

export function NotFoundPage() {
  useTitle("Not found");
  return (
    <>
      <PageHeader title="Page not found">This console has no page at this address.</PageHeader>
      <p><a href="#/">Go to the overview</a></p>
    </>
  );
}
