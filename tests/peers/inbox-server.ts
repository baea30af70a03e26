import http from "node:http";
import { Webhook } from "standardwebhooks";

// The sandbox's inbox: a webhook receiver that verifies each delivery's Standard Webhooks signature with the
// `standardwebhooks` library (as a subscriber's own endpoint would), and one page (and a JSON route) showing what
// every stand-in received: those deliveries, the n8n stand-in's workflow pushes, the Slack stand-in's messages, the
// cards (and replies) the Teams stand-in's Bot Framework Connector received, the conversion events the Reddit Ads
// stand-in accepted, and the targeting writes each ads stand-in applied.

export interface InboxDelivery {
  at: string;
  /** The path's last segment: one receiver URL per subscription (`/hooks/<name>`). */
  hook: string;
  verified: boolean;
  /** Why it was refused (no secret registered for the hook, a bad signature, a stale timestamp). */
  error: string | null;
  event_type: string | null;
  webhook_id: string | null;
  body: unknown;
}

/** One conversion event as Reddit accepted it; its user identifiers are left out (hashes, and long). */
export interface InboxConversion { at: string; pixel_id: string; event_type: string; conversion_id: string; test_id: string | null }

/** One applied targeting write (validate-only and refused ones are not). `entity` names the level: "ad group 123". */
export interface InboxAdsWrite { provider: string; at: string; entity: string; change: string }

export interface InboxSources {
  n8nPushes(): { at: string; path: string; event: string | null; body: unknown }[];
  slackMessages(): { channel: string; ts: string; text: string; thread_ts: string | null }[];
  /** `text`: the activity's summary (a card's notification text) or its text; `reply_to`: the card a reply answers; `updates`: times the card was replaced. */
  teamsMessages(): { channel: string; conversation_id: string; activity_id: string; reply_to: string | null; text: string; updates: number }[];
  conversions(): InboxConversion[];
  adsWrites(): InboxAdsWrite[];
}

export interface InboxServer {
  url: string;
  /** Where a subscription named `hook` delivers. */
  hookUrl(hook: string): string;
  /** The signing secret (`whsec_…`) a hook's deliveries are verified with. */
  setSecret(hook: string, secret: string): void;
  deliveries: InboxDelivery[];
  close(): Promise<void>;
}

const MAX_KEPT = 500;
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startInboxServer(opts: { port?: number; sources: InboxSources }): Promise<InboxServer> {
  const secrets = new Map<string, Webhook>();
  const deliveries: InboxDelivery[] = [];
  const received = (): Received => ({
    webhooks: deliveries, n8n_pushes: opts.sources.n8nPushes(), slack_messages: opts.sources.slackMessages(), teams_messages: opts.sources.teamsMessages(),
    conversions: opts.sources.conversions(), ads_writes: opts.sources.adsWrites(),
  });

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://inbox");
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const hook = /^\/hooks\/([\w.-]+)$/.exec(url.pathname)?.[1];
      if (req.method === "POST" && hook) {
        const raw = Buffer.concat(chunks).toString("utf8");
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        const wh = secrets.get(hook);
        let body: unknown = raw;
        let error: string | null = wh ? null : `no secret registered for hook ${hook}`;
        try {
          if (wh) body = wh.verify(raw, headers);
          else body = JSON.parse(raw);
        } catch (e) {
          error ??= `signature not verified: ${(e as Error).message}`;
        }
        deliveries.push({
          at: new Date().toISOString(), hook, verified: error === null, error, body,
          event_type: headers["x-webhook-event-type"] ?? null, webhook_id: headers["webhook-id"] ?? null,
        });
        if (deliveries.length > MAX_KEPT) deliveries.shift();
        // A receiver answers 2xx only to what it verified, so a bad signature shows as failed attempts in the log.
        res.writeHead(error ? 401 : 204).end();
        return;
      }
      if (req.method === "GET" && url.pathname === "/received.json") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(received(), null, 2));
        return;
      }
      if (req.method === "GET" && url.pathname === "/") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page(received()));
        return;
      }
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }));
    });
  });
  await new Promise<void>((resolve, reject) => { server.once("error", reject); server.listen(opts.port ?? 0, "127.0.0.1", () => resolve()); });
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    hookUrl: (hook) => `${url}/hooks/${hook}`,
    setSecret: (hook, secret) => { secrets.set(hook, new Webhook(secret)); },
    deliveries,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

interface Received {
  webhooks: InboxDelivery[];
  n8n_pushes: ReturnType<InboxSources["n8nPushes"]>;
  slack_messages: ReturnType<InboxSources["slackMessages"]>;
  teams_messages: ReturnType<InboxSources["teamsMessages"]>;
  conversions: InboxConversion[];
  ads_writes: InboxAdsWrite[];
}

function page(r: Received): string {
  const rows = (cells: string[][]) => cells.map((c) => `<tr>${c.map((x) => `<td>${esc(x)}</td>`).join("")}</tr>`).join("");
  const table = (title: string, head: string[], body: string[][]) => `<h2>${esc(title)} (${body.length})</h2>` +
    (body.length ? `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows(body)}</tbody></table>` : "<p>Nothing yet.</p>");
  const name = (b: unknown) => (b && typeof b === "object" && "trend_name" in b ? String((b as { trend_name: unknown }).trend_name) : "");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="5"><title>Trendgate sandbox inbox</title>
<style>body{font:14px system-ui,sans-serif;margin:2rem;max-width:72rem}table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top}th{background:#f4f4f4}</style></head>
<body><main><h1>What the sandbox received</h1><p>Newest last; this page reloads every 5 s. JSON: <a href="/received.json">/received.json</a>.</p>
${table("Webhook deliveries", ["at", "hook", "event type", "trend", "signature"], r.webhooks.map((d) => [d.at, d.hook, d.event_type ?? "", name(d.body), d.verified ? "verified" : `refused: ${d.error}`]))}
${table("n8n workflow pushes", ["at", "webhook path", "event", "trend"], r.n8n_pushes.map((p) => [p.at, p.path, p.event ?? "", name((p.body as { data?: unknown })?.data)]))}
${table("Slack messages", ["channel", "ts", "thread", "text"], r.slack_messages.map((m) => [m.channel, m.ts, m.thread_ts ?? "", m.text]))}
${table("Teams messages", ["channel", "activity", "reply to", "updated", "text"], r.teams_messages.map((m) => [m.channel, m.activity_id, m.reply_to ?? "", m.updates ? `${m.updates}×` : "", m.text]))}
${table("Conversion events (Reddit Ads)", ["at", "pixel", "event", "conversion id", "test id"], r.conversions.map((c) => [c.at, c.pixel_id, c.event_type, c.conversion_id, c.test_id ?? ""]))}
${table("Ads targeting writes", ["at", "provider", "entity", "change"], r.ads_writes.map((w) => [w.at, w.provider, w.entity, w.change]))}
</main></body></html>`;
}
