import type { Observation, Page, ProviderContext, QuotaState } from "../types.ts";
import { ProviderError } from "../types.ts";
import { youtubeError } from "./errors.ts";
import { QuotaLedger, type YouTubeMethod } from "./quota.ts";

// YouTube Data API v3 with an API key (public search and statistics need no OAuth).
// ctx.baseUrl is https://www.googleapis.com/youtube/v3 in production.

export interface YouTubeOptions {
  apiKey: string;
  /** Shared across calls (and persisted by the caller via snapshot/restore); its clock also dates quota resets. */
  ledger?: QuotaLedger;
  /** Dates observations; defaults to the ledger's clock. */
  now?: () => Date;
}

export interface VideoSummary { videoId: string; title: string; publishedAt: Date; channelTitle: string }

export interface VideoStatistics extends VideoSummary {
  viewCount: number;
  /** null when the owner hides it (likes hidden, comments disabled). */
  likeCount: number | null;
  commentCount: number | null;
}

export interface YouTubeSearchParams {
  q: string;
  publishedAfter?: Date;
  /** 1..50, default 50: every page costs the same, so take as many as a page holds. */
  maxResults?: number;
  pageToken?: string | null;
  regionCode?: string;
}

/** A momentum page spends from two buckets, so it reports both. */
export interface MomentumPage extends Omit<Page<Observation>, "quota"> {
  quota: { search: QuotaState; videos: QuotaState };
}

const MAX_IDS = 50; // videos.list takes at most 50 ids per call

export class YouTubeClient {
  readonly ledger: QuotaLedger;
  private readonly now: () => Date;

  constructor(private readonly ctx: ProviderContext, private readonly opts: YouTubeOptions) {
    this.ledger = opts.ledger ?? new QuotaLedger({ now: opts.now });
    this.now = opts.now ?? this.ledger.now;
  }

  /** Newest videos matching q (search.list, order=date): one page. */
  async searchVideos(p: YouTubeSearchParams): Promise<Page<VideoSummary>> {
    const params: Record<string, string | undefined> = {
      part: "snippet", type: "video", order: "date", q: p.q,
      maxResults: String(Math.min(50, Math.max(1, Math.trunc(p.maxResults ?? 50)))),
      publishedAfter: p.publishedAfter && rfc3339(p.publishedAfter),
      pageToken: p.pageToken ?? undefined,
      regionCode: p.regionCode,
    };
    const { body, quota } = await this.call("search.list", "/search", params);
    const items = (body.items ?? [])
      .filter((it: any) => it?.id?.videoId)
      .map((it: any): VideoSummary => ({
        videoId: it.id.videoId,
        // search.list snippets come HTML-escaped ("Rock &amp; Roll"); videos.list snippets do not.
        title: unescapeHtml(it.snippet?.title ?? ""),
        publishedAt: new Date(it.snippet?.publishedAt),
        channelTitle: unescapeHtml(it.snippet?.channelTitle ?? ""),
      }));
    return { items, next: body.nextPageToken ?? null, quota };
  }

  /**
   * Statistics and snippet of each video, in calls of up to 50 ids. Deleted and private videos are simply absent.
   * The quota for all the calls is checked up front, so a list is never half fetched for lack of quota.
   */
  async videoStatistics(ids: string[]): Promise<{ items: VideoStatistics[]; quota: QuotaState }> {
    const unique = [...new Set(ids)];
    const chunks: string[][] = [];
    for (let i = 0; i < unique.length; i += MAX_IDS) chunks.push(unique.slice(i, i + MAX_IDS));
    this.ledger.ensure("videos.list", chunks.length);
    const items: VideoStatistics[] = [];
    for (const chunk of chunks) {
      const { body } = await this.call("videos.list", "/videos", { part: "statistics,snippet", id: chunk.join(",") });
      for (const v of body.items ?? []) {
        items.push({
          videoId: v.id,
          title: v.snippet?.title ?? "",
          publishedAt: new Date(v.snippet?.publishedAt),
          channelTitle: v.snippet?.channelTitle ?? "",
          viewCount: count(v.statistics?.viewCount) ?? 0,
          likeCount: count(v.statistics?.likeCount),
          commentCount: count(v.statistics?.commentCount),
        });
      }
    }
    return { items, quota: this.ledger.state("videos.list", chunks.length) };
  }

  /**
   * One observation per video found by a search page: count = viewCount + likeCount + commentCount (hidden counts
   * as 0), the video's cumulative engagement at observation time, not a delta. observedAt is when we measured
   * (`observedAt`, default now), not publishedAt: the counts are totals as of now, and dating them at upload would
   * put a month of views on day one. Costs one search call plus one videos.list call per 50 videos.
   */
  async topicMomentum(p: { q: string; publishedAfter: Date; pageToken?: string | null; regionCode?: string; observedAt?: Date }): Promise<MomentumPage> {
    this.ledger.ensure("search.list"); // both buckets checked before spending either
    this.ledger.ensure("videos.list");
    const page = await this.searchVideos({ q: p.q, publishedAfter: p.publishedAfter, pageToken: p.pageToken, regionCode: p.regionCode });
    const stats = page.items.length ? await this.videoStatistics(page.items.map((v) => v.videoId)) : { items: [], quota: this.ledger.state("videos.list", 0) };
    const observedAt = p.observedAt ?? this.now();
    const items = stats.items.map((v): Observation => ({
      externalId: v.videoId,
      topic: p.q,
      count: v.viewCount + (v.likeCount ?? 0) + (v.commentCount ?? 0),
      observedAt,
      link: `https://www.youtube.com/watch?v=${encodeURIComponent(v.videoId)}`,
      text: v.title,
    }));
    return { items, next: page.next, quota: { search: page.quota, videos: stats.quota } };
  }

  /** Charges the ledger, calls, and returns the parsed body or throws a ProviderError. */
  private async call(method: YouTubeMethod, path: string, params: Record<string, string | undefined>): Promise<{ body: any; quota: QuotaState }> {
    const quota = this.ledger.spend(method); // throws quota_exhausted locally, before any request
    const url = new URL(this.ctx.baseUrl.replace(/\/+$/, "") + path);
    for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
    url.searchParams.set("key", this.opts.apiKey);
    const r = await this.ctx.request("GET", url.href, { headers: { accept: "application/json" } });
    if (r.error || r.status === null || r.status < 200 || r.status >= 300) {
      throw youtubeError(r, () => this.ledger.exhaust(method).resetAt!);
    }
    try {
      return { body: JSON.parse(r.body), quota };
    } catch {
      throw new ProviderError("youtube", "unavailable", `${method}: unreadable response${r.truncated ? " (truncated)" : ""}`, { status: r.status });
    }
  }
}

/** RFC 3339 without milliseconds, the form YouTube documents (1970-01-01T00:00:00Z). */
const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "Z");

/** Counts arrive as strings ("12345"), absent when hidden. */
function count(v: unknown): number | null {
  if (v === undefined || v === null || v === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
function unescapeHtml(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === "#") {
      const code = e[1].toLowerCase() === "x" ? parseInt(e.slice(2), 16) : Number(e.slice(1));
      return code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}
