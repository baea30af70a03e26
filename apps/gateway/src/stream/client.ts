import { WebSocket } from "ws";
import { categoryMatches } from "@trendgate/webhooks";
import type { StreamEntry } from "./account-reader.ts";
import { compareStreamIds } from "./ids.ts";

/** Close codes this server uses (RFC 6455 section 7.4.1 and the IANA registry). */
export const CLOSE = {
  goingAway: 1001, // the gateway is shutting down: reconnect (with last_event_id) to another instance
  internalError: 1011,
  tryAgainLater: 1013, // slow consumer: it fell more than STREAM_MAX_BUFFER_BYTES behind
  policyViolation: 1008, // the API key was revoked or expired while connected
} as const;

/** How long a dropped client has to read its close frame before its socket is destroyed. */
export const CLOSE_GRACE_MS = 5000;

export interface StreamClientOptions {
  accountId: string;
  /** The credential the client connected with (kept in memory only): re-checked when keys are revoked or expire. */
  credential: string | undefined;
  keyPrefix: string | null;
  category: string | null;
  lastEventId: string | null;
  maxBufferBytes: number;
  /** Pages of entries after `after`, oldest first, for the resume replay (XRANGE). */
  replay: (after: string) => Promise<StreamEntry[]>;
  onClosed: (client: StreamClient) => void;
  onSlowConsumer?: () => void;
}

/**
 * One WebSocket subscriber. Live entries arrive from its account's shared reader; with `last_event_id` it first
 * replays the stream after that id, holding live entries meanwhile, and skips anything it has already sent, so the
 * client sees every entry once and in stream order. Memory per client is bounded by `maxBufferBytes`: whether the
 * bytes wait in the socket (bufferedAmount) or in the hold queue during a replay, going over closes it with 1013.
 */
export class StreamClient {
  ws?: WebSocket;
  private lastSentId: string | null;
  private held: StreamEntry[] | null = []; // live entries waiting for attach/replay; null once live
  private heldBytes = 0;
  private closed = false;

  constructor(readonly opts: StreamClientOptions) {
    this.lastSentId = opts.lastEventId;
  }

  get accountId() { return this.opts.accountId; }

  /** Called by the account reader for each batch (before attach too: those entries are held). */
  deliver(entries: StreamEntry[]) {
    if (this.closed) return;
    if (this.held) {
      for (const e of entries) {
        if (!categoryMatches(this.opts.category, e.category)) continue;
        this.held.push(e);
        this.heldBytes += e.message.length;
      }
      if (this.heldBytes > this.opts.maxBufferBytes) this.slowConsumer();
      return;
    }
    for (const e of entries) if (!this.send(e)) return;
  }

  /** The upgrade completed: replay (if resuming), then flush what was held, then go live. */
  async attach(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", () => { /* clients have nothing to say; maxPayload bounds what they can send */ });
    ws.on("error", () => { /* 'close' follows */ });
    ws.on("close", () => this.release());
    if (this.closed) return void ws.terminate();
    try {
      if (this.lastSentId !== null) await this.runReplay(this.lastSentId);
    } catch {
      return this.drop(CLOSE.internalError, "stream unavailable");
    }
    const held = this.held ?? [];
    this.held = null;
    this.heldBytes = 0;
    for (const e of held) if (!this.send(e)) return;
  }

  private async runReplay(after: string) {
    for (;;) {
      const page = await this.opts.replay(after);
      if (this.closed || !page.length) return;
      let flushed: Promise<unknown> = Promise.resolve();
      for (const e of page) {
        if (!this.send(e, (p) => (flushed = p))) return;
        after = e.id;
      }
      // Pull-based flow control: read the next page only once this one has been written to the socket.
      await flushed;
    }
  }

  /** Sends one entry unless already sent; false when the client was dropped (or is gone). */
  private send(e: StreamEntry, onWritten?: (written: Promise<unknown>) => void): boolean {
    if (this.closed || !this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    if (this.lastSentId !== null && compareStreamIds(e.id, this.lastSentId) <= 0) return true;
    if (!categoryMatches(this.opts.category, e.category)) return true;
    if (this.ws.bufferedAmount > this.opts.maxBufferBytes) {
      this.slowConsumer();
      return false;
    }
    if (onWritten) onWritten(new Promise((resolve) => this.ws!.send(e.message, resolve)));
    else this.ws.send(e.message);
    this.lastSentId = e.id;
    return true;
  }

  private slowConsumer() {
    if (this.closed) return;
    this.opts.onSlowConsumer?.();
    this.drop(CLOSE.tryAgainLater, "slow consumer");
  }

  /**
   * Stops all deliveries at once and closes the socket with `code`. The close frame queues behind what the socket
   * still holds (at most maxBufferBytes and one message); a client that does not read it within `CLOSE_GRACE_MS`
   * is cut off, which frees that memory too.
   */
  drop(code: number, reason: string) {
    if (this.closed) return;
    this.release();
    const ws = this.ws;
    if (!ws) return;
    if (ws.readyState !== WebSocket.OPEN) return void ws.terminate();
    ws.close(code, reason);
    setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  private release() {
    if (this.closed) return;
    this.closed = true;
    this.held = null;
    this.heldBytes = 0;
    this.opts.onClosed(this);
  }

  get isClosed() { return this.closed; }
}
