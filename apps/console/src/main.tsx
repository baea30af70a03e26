import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { Layout } from "./components/Layout.tsx";
import { ActivityPage } from "./pages/activity.tsx";
import { AdsPage } from "./pages/ads.tsx";
import { ConnectionsPage } from "./pages/connections.tsx";
import { FleetPage } from "./pages/fleet.tsx";
import { MutesPage } from "./pages/mutes.tsx";
import { OnCallPage } from "./pages/on-call.tsx";
import { NotFoundPage, SessionMessage } from "./pages/session.tsx";
import { OperatorPage } from "./pages/operator.tsx";
import { OverviewPage } from "./pages/overview.tsx";
import { ReportsPage } from "./pages/reports.tsx";
import { RoutingPage } from "./pages/routing.tsx";
import { WebhookDetailPage } from "./pages/webhook-detail.tsx";
import { WebhooksPage } from "./pages/webhooks.tsx";
import { useRoute, type Route } from "./router.ts";
import { bootSession, onSession, sessionState, type SessionState } from "./session.ts";

// Bootstrap: exchange the one-time link (or pick up the stored session), then route on the hash. `#/fleet` is the
// operators' page: it needs the admin token, not a console session, so it is shown outside the session flow.

function Page({ route }: { route: Route }) {
  const [section, id, ...rest] = route.parts;
  if (rest.length) return <NotFoundPage />;
  switch (section) {
    case undefined: return <OverviewPage />;
    case "webhooks": return id ? <WebhookDetailPage key={id} id={id} /> : <WebhooksPage />;
    case "connections": return id ? <NotFoundPage /> : <ConnectionsPage />;
    case "operator": return id ? <NotFoundPage /> : <OperatorPage />;
    case "routing": return id ? <NotFoundPage /> : <RoutingPage />;
    case "on-call": return id ? <NotFoundPage /> : <OnCallPage />;
    case "mutes": return id ? <NotFoundPage /> : <MutesPage />;
    case "ads": return id ? <NotFoundPage /> : <AdsPage />;
    case "reports": return id ? <NotFoundPage /> : <ReportsPage />;
    case "activity": return id ? <NotFoundPage /> : <ActivityPage />;
    default: return <NotFoundPage />;
  }
}

function App() {
  const [session, setSession] = useState<SessionState>(sessionState);
  const route = useRoute();
  useEffect(() => {
    const off = onSession(setSession);
    setSession(sessionState()); // what changed before this effect ran
    return off;
  }, []);

  if (route.parts.length === 1 && route.parts[0] === "fleet") return <FleetPage />;
  switch (session.kind) {
    case "exchanging":
      return <SessionMessage title="Opening the console…" busy />;
    case "link_expired":
      return <SessionMessage title="This link has expired or was already used. Ask for a new console link." alert />;
    case "exchange_failed":
      return <SessionMessage title="The console could not be opened." alert>{session.detail}</SessionMessage>;
    case "ended":
      return <SessionMessage title="Your console session has ended." alert>Ask for a new console link to sign in again.</SessionMessage>;
    case "no_session":
      return (
        <SessionMessage title="Open the console with a console link.">
          A link comes from <code>POST /api/console/sessions</code> with an API key (see the <a href="/docs/">API reference</a>); it opens the console once.
        </SessionMessage>
      );
    case "signing_out":
      return <SessionMessage title="Signing out…" busy />;
    case "signed_out":
      return <SessionMessage title="You have signed out.">Ask for a new console link to sign in again.</SessionMessage>;
    case "ready":
      return (
        <Layout route={route} session={session.session}>
          <Page key={route.parts[0] ?? ""} route={route} />
        </Layout>
      );
  }
}

function mount() {
  let root = document.getElementById("app");
  if (!root) {
    root = document.createElement("div");
    root.id = "app";
    document.body.append(root);
  }
  render(<App />, root);
  void bootSession();
  // A new link opened in this tab while the console is open changes only the hash: exchange it too.
  addEventListener("hashchange", () => { if (location.hash.startsWith("#token=")) void bootSession(); });
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount, { once: true });
else mount();
