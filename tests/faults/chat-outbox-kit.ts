import http from "node:http";
import type { AddressInfo } from "node:net";
import { registry } from "@trendgate/connectors";
import { QUEUES } from "@trendgate/contracts";
import { intakeTrendEvents } from "@trendgate/operator";
import { dispatchOutbox } from "@trendgate/queues";
import type { OutboxRow } from "@trendgate/db";
import { onCleanup } from "../helpers/faults-proc-kit.ts";
import type { Stack } from "../helpers/stack.ts";
import { connectedAccount, event } from "../operator/helpers.ts";
import type { SlackServer } from "../peers/slack-server.ts";

// Shared by tests/faults/chat-outbox.test.ts: a Slack that answers slowly (so posts are in flight when a worker
// dies), operator items made the way the trend-events worker makes them, and what Slack shows per item.

/**
 * A proxy in front of the Slack peer that holds each answer for `delayMs`: the peer has already done the call (a
 * post is in the channel) while the caller still waits, which is the window a kill -9 can fall into. The SLACK_API_URL
 * to use is `url`. Answers to callers that went away meanwhile are dropped.
 */
export async function slowSlack(slack: SlackServer, delayMs: number) {
  const target = new URL(slack.url);
  const agent = new http.Agent({ keepAlive: true });
  let open = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      open++;
      const headers = { ...req.headers, host: target.host };
      delete headers.connection;
      const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent }, (answer) => {
        const body: Buffer[] = [];
        answer.on("data", (c: Buffer) => body.push(c));
        answer.on("end", () => setTimeout(() => {
          open--;
          if (res.destroyed) return;
          const { connection: _c, "keep-alive": _k, "transfer-encoding": _t, ...rest } = answer.headers;
          const all = Buffer.concat(body);
          res.writeHead(answer.statusCode ?? 502, { ...rest, "content-length": String(all.length) });
          res.end(all);
        }, delayMs));
      });
      up.on("error", () => { open--; res.destroy(); });
      up.end(Buffer.concat(chunks));
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onCleanup(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); agent.destroy(); }));
  return {
    url: `${origin}/api/`,
    /** Calls Slack has answered whose answer is still held here. */
    openNow: () => open,
  };
}

/** Accounts connected to the Slack peer through the browser flow, one saved alerts channel each (`tag`: A-Z, 3+). */
export async function chatAccounts(stack: Stack, slack: SlackServer, n: number, tag: string) {
  const out: Awaited<ReturnType<typeof connectedAccount>>[] = [];
  for (let i = 0; i < n; i++) out.push(await connectedAccount(stack, slack, { id: `C0${tag}${String(i).padStart(4, "0")}`, name: `${tag.toLowerCase()}-${i}` }));
  return out;
}

/**
 * `perAccount` new operator items for each account, each with its card's post committed to the outbox, as the
 * trend-events worker makes them (intakeTrendEvents). Returns the items and the outbox rows, not yet dispatched.
 */
export async function newItems(stack: Stack, accounts: { accountId: string }[], perAccount: number) {
  const { db, config } = stack.gw.deps;
  const events = accounts.flatMap((a) => Array.from({ length: perAccount }, () => event(a.accountId, { severity: "high" })));
  const { outbox } = await intakeTrendEvents(db, { registry, config }, events);
  const rows = await db.outboxMessage.findMany({ where: { id: { in: outbox.map((r) => r.id) } }, select: { id: true, subjectId: true } });
  if (rows.length !== events.length) throw new Error(`expected ${events.length} card posts, got ${rows.length}`);
  return { itemIds: rows.map((r) => r.subjectId!), messageIds: rows.map((r) => r.id), outbox };
}

/** Queues the rows' first attempts (what the producer does right after its commit). */
export const dispatch = (stack: Stack, rows: OutboxRow[]) => dispatchOutbox(stack.gw.deps.queues, rows);

/** The item a card posted to Slack is about (its buttons carry the item id). */
export function itemOfCard(blocks: any[] | null): string | null {
  const actions = (blocks ?? []).find((b) => b.type === "actions");
  try {
    return JSON.parse(actions?.elements?.[0]?.value ?? "null")?.item_id ?? null;
  } catch {
    return null;
  }
}

/** How many cards (top-level messages, not threaded replies) each item has in these channels. */
export function cardsPerItem(slack: SlackServer, channelIds: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const ch of channelIds) {
    for (const m of slack.messages(ch)) {
      if (m.threadTs) continue;
      const id = itemOfCard(m.blocks) ?? `?${m.ts}`;
      (out.get(id) ?? out.set(id, []).get(id)!).push(m.ts);
    }
  }
  return out;
}

/** The chat-messages queue of this stack. */
export const chatQueue = (stack: Stack) => stack.gw.deps.queues.get(QUEUES.chatMessages);
