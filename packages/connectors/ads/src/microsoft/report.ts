import { pinnedVersion, pollReport, ProviderError, type ProviderDownload, type ProviderEnv } from "@trendgate/connector-core";
import { http } from "./http.ts";
import { Unzip, UnzipInflate } from "fflate";
import type { AdsReporting, ReportingCapabilities, ReportingClient, ReportLevel, ReportQuery, ReportRow } from "../kind.ts";
import { parseAccount } from "./client.ts";
import { hostOf } from "./hosts.ts";
import { callError, faultOf, PROVIDER } from "./errors.ts";
import { env as ENV, manifest } from "./manifest.ts";

// Microsoft Advertising reporting (Reporting service v13, REST/JSON). Reports are async jobs:
// `POST /Reporting/v13/GenerateReport/Submit` with a typed ReportRequest (the REST body needs its `Type`
// discriminator, and `Scope.AccountIds` is a flat list of longs) answers a ReportRequestId; `GenerateReport/Poll`
// answers `ReportRequestStatus {Status: Pending|Success|Error, ReportDownloadUrl}`. The URL (valid 5 minutes, null
// when the report has no rows) is a pre-signed blob of a ZIP holding one CSV: it is fetched WITHOUT our credentials
// (the signature is the authorization; the bearer token must not travel to a storage host), inflated and parsed as it
// streams, and its rows come out in pages of PAGE_ROWS as the consumer pulls: a page is parsed from the bytes read
// so far, the next bytes are read only when the consumer asks. The same user must submit and poll (Microsoft's
// rule): one client instance, one access token, does both.
// The account's currency and time zone come from Customer Management's GetAccount (`POST
// /CustomerManagement/v13/Account/Query`). Spend is a decimal of the account currency, converted to micros with
// string arithmetic. Report rows are stored "in the time zone of the campaign" (Microsoft's reporting guide), which is
// the account's unless a campaign was given its own: such a campaign's days are its own zone's days (approximate:
// a daily report cannot be re-bucketed).
// Hosts: Reporting lives on reporting.api.bingads.microsoft.com and Customer Management on
// clientcenter.api.bingads.microsoft.com; they are derived from MICROSOFT_ADS_API_URL's campaign.* host (sandbox
// included) unless set, and a base URL that is not a campaign.* host (a proxy, a local stand-in) serves all three.

/** Configuration read from PROVIDER_ENV (named in the manifest's env). */
export const REPORTING_ENV = {
  reportingUrl: ENV.reportingUrl,
  customerUrl: ENV.customerUrl,
  /** The first wait before polling a submitted report; doubled after each Pending answer up to MAX_POLL_MS. */
  pollSeconds: ENV.reportPollSeconds,
  /** How long a report may stay Pending before we give up on it. */
  timeoutSeconds: ENV.reportTimeoutSeconds,
} as const;

const PAGE_ROWS = 1000;
const DEFAULT_POLL_MS = 2_000;
const MAX_POLL_MS = 15_000;
const DEFAULT_REPORT_TIMEOUT_MS = 20 * 60_000;
/** Consecutive throttled or failed polls tolerated before the report is given up (the job itself is fine). */
const MAX_POLL_RETRIES = 3;
/** Daily performance data is kept 36 months (Reporting Data Retention Time Periods); 36 * 30.4 days, rounded down. */
const RETENTION_DAYS = 1095;

export const capabilities: ReportingCapabilities = {
  levels: ["campaign", "ad_group", "ad"],
  granularities: ["day", "total"],
  maxLookbackDays: RETENTION_DAYS,
  // No range cap of its own: a custom range may span the whole retention period.
  maxRangeDays: RETENTION_DAYS,
  // Approximate wording, from the Reporting column descriptions as remembered: Clicks excludes the clicks Microsoft
  // filters as invalid; Conversions counts the goals marked to count in the Conversions column.
  clicks: "Microsoft's Clicks: clicks on the ad, invalid (filtered) clicks excluded",
  conversions: "Microsoft's Conversions: conversions of the account's UET conversion goals counted in the Conversions column, attributed to the ad click (or view) that led to them; may be fractional under data-driven attribution",
  asyncJobs: true,
};

/** The report request type per level, and the attribute columns each needs (Microsoft's column names). */
const REPORTS: Record<ReportLevel, { type: string; columns: string[] }> = {
  campaign: { type: "CampaignPerformanceReportRequest", columns: ["AccountId", "CampaignId", "CampaignName"] },
  ad_group: { type: "AdGroupPerformanceReportRequest", columns: ["AccountId", "CampaignId", "CampaignName", "AdGroupId", "AdGroupName"] },
  // AdTitle is the nearest thing to an ad name Microsoft reports (approximate: for responsive search ads it is the
  // headline shown, not a name the advertiser gave).
  ad: { type: "AdPerformanceReportRequest", columns: ["AccountId", "CampaignId", "CampaignName", "AdGroupId", "AdGroupName", "AdId", "AdTitle"] },
};
const METRICS = ["Impressions", "Clicks", "Spend", "Conversions"];

/**
 * Microsoft's time zone names (Customer Management TimeZone and Reporting ReportTimeZone share them) as IANA zones,
 * by the Windows zone each names (CLDR windowsZones; approximate where a Microsoft zone spans regions with different
 * rules, e.g. AthensIslandanbulMinsk, AlmatyNovosibirsk). The misspellings are Microsoft's.
 */
export const TIME_ZONES: Record<string, string> = {
  Nukualofa: "Pacific/Tongatapu", FijiKamchatkaMarshallIsland: "Pacific/Fiji", AucklandWellington: "Pacific/Auckland",
  MagadanSolomonIslandNewCaledonia: "Pacific/Guadalcanal", Vladivostok: "Asia/Vladivostok", Hobart: "Australia/Hobart",
  GuamPortMoresby: "Pacific/Port_Moresby", CanberraMelbourneSydney: "Australia/Sydney", Brisbane: "Australia/Brisbane",
  Darwin: "Australia/Darwin", Adelaide: "Australia/Adelaide", Yakutsk: "Asia/Yakutsk", Seoul: "Asia/Seoul",
  OsakaSapporoTokyo: "Asia/Tokyo", Taipei: "Asia/Taipei", Perth: "Australia/Perth", KualaLumpurSingapore: "Asia/Singapore",
  IrkutskUlaanBataar: "Asia/Irkutsk", BeijingChongqingHongKongUrumqi: "Asia/Shanghai", Krasnoyarsk: "Asia/Krasnoyarsk",
  BangkokHanoiJakarta: "Asia/Bangkok", Rangoon: "Asia/Yangon", SriJayawardenepura: "Asia/Colombo", AstanaDhaka: "Asia/Dhaka",
  AlmatyNovosibirsk: "Asia/Novosibirsk", Kathmandu: "Asia/Kathmandu", ChennaiKolkataMumbaiNewDelhi: "Asia/Kolkata",
  IslandamabadKarachiTashkent: "Asia/Karachi", Ekaterinburg: "Asia/Yekaterinburg", Kabul: "Asia/Kabul",
  BakuTbilisiYerevan: "Asia/Yerevan", AbuDhabiMuscat: "Asia/Dubai", Tehran: "Asia/Tehran", Nairobi: "Africa/Nairobi",
  MoscowStPetersburgVolgograd: "Europe/Moscow", KuwaitRiyadh: "Asia/Riyadh", Baghdad: "Asia/Baghdad", Jerusalem: "Asia/Jerusalem",
  HelsinkiKyivRigaSofiaTallinnVilnius: "Europe/Helsinki", HararePretoria: "Africa/Johannesburg", Cairo: "Africa/Cairo",
  Bucharest: "Europe/Bucharest", AthensIslandanbulMinsk: "Europe/Athens", WestCentralAfrica: "Africa/Lagos",
  SarajevoSkopjeWarsawZagreb: "Europe/Warsaw", BrusselsCopenhagenMadridParis: "Europe/Paris",
  BelgradeBratislavaBudapestLjubljanaPrague: "Europe/Budapest", AmsterdamBerlinBernRomeStockholmVienna: "Europe/Berlin",
  CasablancaMonrovia: "Africa/Casablanca", GreenwichMeanTimeDublinEdinburghLisbonLondon: "Europe/London", Azores: "Atlantic/Azores",
  CapeVerdeIsland: "Atlantic/Cape_Verde", MidAtlantic: "Atlantic/South_Georgia", Brasilia: "America/Sao_Paulo",
  BuenosAiresGeorgetown: "America/Argentina/Buenos_Aires", Greenland: "America/Nuuk", Newfoundland: "America/St_Johns",
  AtlanticTimeCanada: "America/Halifax", CaracasLaPaz: "America/Caracas", Santiago: "America/Santiago", BogotaLimaQuito: "America/Bogota",
  EasternTimeUSCanada: "America/New_York", IndianaEast: "America/Indiana/Indianapolis", CentralAmerica: "America/Guatemala",
  CentralTimeUSCanada: "America/Chicago", GuadalajaraMexicoCityMonterrey: "America/Mexico_City", Saskatchewan: "America/Regina",
  Arizona: "America/Phoenix", ChihuahuaLaPazMazatlan: "America/Mazatlan", MountainTimeUSCanada: "America/Denver",
  PacificTimeUSCanadaTijuana: "America/Los_Angeles", Alaska: "America/Anchorage", Hawaii: "Pacific/Honolulu",
  MidwayIslandandSamoa: "Pacific/Pago_Pago", InternationalDateLineWest: "Etc/GMT+12",
};

const bad = (message: string) => new ProviderError(PROVIDER, "bad_request", message);
const unavailable = (message: string, providerCode?: string) => new ProviderError(PROVIDER, "unavailable", message, providerCode ? { providerCode } : {});

/**
 * A decimal amount of the account currency ("1234.56", FormatVersion 1.0 may group thousands with commas) as
 * integer micros, exactly: digits are shifted, never multiplied as floats. Beyond 6 decimals (no currency has them)
 * it rounds half away from zero.
 */
export function microsOf(amount: string): string {
  const s = amount.replace(/,/g, "").trim();
  if (s === "") return "0";
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(s);
  if (!m || (m[2] === "" && !m[3])) throw unavailable(`report: spend ${JSON.stringify(amount)} is not a decimal`, "bad_spend");
  const frac = (m[3] ?? "").padEnd(7, "0");
  let micros = BigInt((m[2] || "0") + frac.slice(0, 6));
  if (frac[6] >= "5") micros += 1n;
  return (m[1] === "-" && micros !== 0n ? -micros : micros).toString();
}

const countOf = (v: string, what: string): number => {
  const s = v.replace(/,/g, "").trim();
  if (s === "") return 0;
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n < 0) throw unavailable(`report: ${what} ${JSON.stringify(v)} is not a count`, "bad_count");
  return n;
};
const conversionsOf = (v: string | undefined): number | null => {
  if (v === undefined) return null;
  const s = v.replace(/,/g, "").trim();
  if (s === "") return null;
  const n = Number(s);
  if (!Number.isFinite(n)) throw unavailable(`report: conversions ${JSON.stringify(v)} is not a number`, "bad_conversions");
  return n;
};

/**
 * An incremental RFC 4180 reader: text goes in as it is inflated, complete records come out. Quoted fields may hold
 * commas, doubled quotes and line breaks; CRLF and LF both end a record; blank lines are skipped.
 */
export class CsvReader {
  private field = "";
  private record: string[] = [];
  /** 0 field start, 1 unquoted, 2 quoted, 3 quote seen inside a quoted field. */
  private state = 0;
  private any = false;

  push(text: string, out: string[][]): void {
    let { field, state } = this;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (state === 2) {
        // Copy the run up to the next quote in one slice: quoted names are the long fields.
        const q = text.indexOf('"', i);
        if (q < 0) { field += text.slice(i); break; }
        field += text.slice(i, q);
        i = q;
        state = 3;
        continue;
      }
      if (c === 34 /* " */) {
        if (state === 0) { state = 2; this.any = true; continue; }
        if (state === 3) { field += '"'; state = 2; continue; }
        field += '"'; // a stray quote inside an unquoted field: kept, as lenient readers do
        continue;
      }
      if (c === 44 /* , */) { this.record.push(field); field = ""; state = 0; this.any = true; continue; }
      if (c === 10 /* \n */) { this.record.push(field); field = ""; state = 0; this.flush(out); continue; }
      if (c === 13 /* \r */) continue;
      field += text[i];
      state = 1;
      this.any = true;
    }
    this.field = field;
    this.state = state;
  }

  end(out: string[][]): void {
    if (this.state === 2) throw unavailable("report: the CSV ends inside a quoted field", "bad_csv");
    if (this.any || this.field !== "") { this.record.push(this.field); this.field = ""; this.state = 0; this.flush(out); }
  }

  private flush(out: string[][]) {
    const r = this.record;
    this.record = [];
    if (this.any || r.length > 1 || r[0] !== "") out.push(r);
    this.any = false;
  }
}

/** Days since the epoch of a YYYY-MM-DD date (calendar arithmetic only, no zone). */
const dayNumber = (d: string) => Date.UTC(Number(d.slice(0, 4)), Number(d.slice(5, 7)) - 1, Number(d.slice(8, 10))) / 86_400_000;
const isDate = (d: string) => /^\d{4}-\d{2}-\d{2}$/.test(d) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d);
/** Today's date in an IANA zone. */
const todayIn = (zone: string) => new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
const msDate = (d: string) => ({ Day: Number(d.slice(8, 10)), Month: Number(d.slice(5, 7)), Year: Number(d.slice(0, 4)) });

const secondsEnv = (env: ProviderEnv | undefined, name: string, fallbackMs: number, maxS: number): number => {
  const raw = env?.[name];
  if (!raw) return fallbackMs;
  const s = Number(raw);
  if (!(s > 0 && s <= maxS)) throw new Error(`${name} must be seconds between 0 and ${maxS}, not ${JSON.stringify(raw)}`);
  return Math.round(s * 1000);
};

interface Account { customerId: string; accountId: string }
interface AccountInfo { currency: string; timeZone: string; zone: string }

export class MicrosoftAdsReportingClient implements ReportingClient {
  private readonly reporting: string;
  private readonly customer: string;
  private readonly waitMs: number;
  private readonly pollMs: number;
  private readonly timeoutMs: number;

  constructor(private readonly ctx: { baseUrl: string; accessToken: string; env?: ProviderEnv }) {
    const version = pinnedVersion(manifest, ctx.env);
    this.reporting = `${hostOf(ctx.baseUrl, ctx.env?.[REPORTING_ENV.reportingUrl], "reporting")}/Reporting/${version}/`;
    this.customer = `${hostOf(ctx.baseUrl, ctx.env?.[REPORTING_ENV.customerUrl], "clientcenter")}/CustomerManagement/${version}/`;
    this.waitMs = secondsEnv(ctx.env, ENV.throttleWaitSeconds, 60_000, 3600);
    this.pollMs = secondsEnv(ctx.env, REPORTING_ENV.pollSeconds, DEFAULT_POLL_MS, 600);
    this.timeoutMs = secondsEnv(ctx.env, REPORTING_ENV.timeoutSeconds, DEFAULT_REPORT_TIMEOUT_MS, 24 * 3600);
  }

  /** One JSON call (Microsoft's REST operations are POSTs); its answer, or the fault as a ProviderError. */
  private async call(url: string, a: Account, body: unknown, what: string, signal?: AbortSignal): Promise<any> {
    const developerToken = this.ctx.env?.[ENV.developerToken];
    if (!developerToken) throw bad(`${ENV.developerToken} is not set: every Microsoft Advertising call needs the developer token of the app's Microsoft Advertising account`);
    const res = await http.fetch(what, url, {
      env: this.ctx.env, method: "POST", signal, json: body,
      headers: { authorization: `Bearer ${this.ctx.accessToken}`, DeveloperToken: developerToken, CustomerId: a.customerId, CustomerAccountId: a.accountId },
    });
    const parsed = res.text ? res.body : {};
    const trackingId = faultOf(parsed)?.TrackingId ?? res.headers.get("trackingid");
    if (res.status !== 200 || !parsed || faultOf(parsed)) throw callError(res.status, parsed, what, trackingId, this.waitMs);
    return parsed;
  }

  private async info(a: Account, signal?: AbortSignal): Promise<AccountInfo> {
    // A long goes as its digits, as in every other body: a JSON number past 2^53 would arrive with digits lost.
    const r = await this.call(`${this.customer}Account/Query`, a, { AccountId: a.accountId }, `GetAccount ${a.accountId}`, signal);
    const currency = r?.Account?.CurrencyCode;
    const timeZone = r?.Account?.TimeZone;
    if (typeof currency !== "string" || !/^[A-Z]{3}$/.test(currency)) throw unavailable(`GetAccount ${a.accountId}: no ISO 4217 CurrencyCode in the answer (${JSON.stringify(currency)})`, "no_currency");
    const zone = typeof timeZone === "string" ? TIME_ZONES[timeZone] : undefined;
    if (!zone) throw unavailable(`GetAccount ${a.accountId}: time zone ${JSON.stringify(timeZone)} is not one this connector knows`, "unknown_time_zone");
    return { currency, timeZone, zone };
  }

  async account(accountId: string): Promise<{ currency: string; time_zone: string }> {
    const i = await this.info(parseAccount(accountId));
    return { currency: i.currency, time_zone: i.zone };
  }

  async *pages(q: ReportQuery, opts: { signal?: AbortSignal } = {}): AsyncGenerator<ReportRow[]> {
    const { signal } = opts;
    const a = parseAccount(q.accountId);
    if (!capabilities.levels.includes(q.level)) throw bad(`level ${JSON.stringify(q.level)} is not one of ${capabilities.levels.join(", ")}`);
    if (!capabilities.granularities.includes(q.granularity)) throw bad(`granularity ${JSON.stringify(q.granularity)} is not one of ${capabilities.granularities.join(", ")}`);
    if (!isDate(q.from) || !isDate(q.to) || q.from > q.to) throw bad(`dates from ${q.from} to ${q.to}: two YYYY-MM-DD dates, from not after to`);
    if (dayNumber(q.to) - dayNumber(q.from) + 1 > capabilities.maxRangeDays) throw bad(`a report covers at most ${capabilities.maxRangeDays} days`);
    const groups = q.adGroupIds ? new Set(q.adGroupIds.map(String)) : null;
    if (groups && !groups.size) return;

    const info = await this.info(a, signal);
    // Microsoft refuses an end date after today; today is the account's today (ReportTimeZone below).
    const today = todayIn(info.zone);
    const to = q.to > today ? today : q.to;
    if (q.from > to) return;

    // A campaign report cannot be limited to ad groups (its scope has no ad groups, and an AdGroupReportScope needs
    // each ad group's CampaignId, which the query does not carry): campaign rows of some ad groups are summed from
    // the ad group report, filtered here.
    const summed = q.level === "campaign" && groups !== null;
    const level: ReportLevel = summed ? "ad_group" : q.level;
    const id = await this.submit(a, q, level, to, info.timeZone, signal);
    let url = await this.ready(a, id, signal);
    if (!url) return; // Success without a URL: the report has no rows
    let res = await this.download(url, signal);
    if (res.status === 403 || res.status === 404) {
      // The 5-minute URL expired (a slow consumer between polls): a new poll signs a fresh one.
      await res.body.cancel().catch(() => {});
      url = await this.ready(a, id, signal, 0);
      if (!url) return;
      res = await this.download(url, signal);
    }
    if (res.status !== 200) {
      await res.body.cancel().catch(() => {});
      throw unavailable(`report ${id}: download answered HTTP ${res.status}`, `download_${res.status}`);
    }
    const rows = this.rows(res.body, q, groups, signal);
    if (!summed) return yield* rows;
    // Sum per (day, campaign); bounded by campaigns x days, not by the report's rows.
    const sums = new Map<string, ReportRow & { micros: bigint }>();
    for await (const page of rows) {
      for (const r of page) {
        const key = `${r.date}|${r.campaign_id}`;
        const s = sums.get(key);
        if (!s) { sums.set(key, { ...r, ad_group_id: null, ad_group_name: null, ad_id: null, ad_name: null, micros: BigInt(r.spend_micros) }); continue; }
        s.impressions += r.impressions;
        s.clicks += r.clicks;
        s.micros += BigInt(r.spend_micros);
        s.conversions = s.conversions === null && r.conversions === null ? null : (s.conversions ?? 0) + (r.conversions ?? 0);
      }
    }
    let page: ReportRow[] = [];
    for (const { micros, ...r } of sums.values()) {
      page.push({ ...r, spend_micros: micros.toString() });
      if (page.length === PAGE_ROWS) {
        if (signal?.aborted) throw signal.reason;
        yield page;
        page = [];
      }
    }
    if (page.length) yield page;
  }

  private async submit(a: Account, q: ReportQuery, level: ReportLevel, to: string, timeZone: string, signal?: AbortSignal): Promise<string> {
    const report = REPORTS[level];
    const daily = q.granularity === "day";
    const body = {
      ReportRequest: {
        Type: report.type,
        ExcludeColumnHeaders: false, // we read columns by name
        ExcludeReportFooter: true,
        ExcludeReportHeader: true,
        Format: "Csv",
        FormatVersion: "2.0", // no thousands separators in amounts
        ReportName: `Trendgate ${level} ${q.from}..${to}`,
        ReturnOnlyCompleteData: false, // today may be in range: its rows are as complete as Microsoft has them
        // Without TimePeriod among the columns Microsoft aggregates as Summary anyway: one row per entity.
        Aggregation: daily ? "Daily" : "Summary",
        Columns: [...(daily ? ["TimePeriod"] : []), ...report.columns, ...METRICS],
        Scope: { AccountIds: [a.accountId], ...(level === "campaign" ? { Campaigns: null } : { AdGroups: null, Campaigns: null }) },
        Time: { CustomDateRangeStart: msDate(q.from), CustomDateRangeEnd: msDate(to), PredefinedTime: null, ReportTimeZone: timeZone },
      },
    };
    const r = await this.call(`${this.reporting}GenerateReport/Submit`, a, body, `SubmitGenerateReport (${report.type})`, signal);
    if (typeof r.ReportRequestId !== "string" && typeof r.ReportRequestId !== "number") throw unavailable("SubmitGenerateReport: no ReportRequestId in the answer", "no_report_id");
    return String(r.ReportRequestId);
  }

  /** Polls until Success (its download URL, null when there are no rows) or Error, waiting longer each time. */
  private ready(a: Account, id: string, signal?: AbortSignal, firstWaitMs = this.pollMs): Promise<string | null> {
    // A throttled or failed poll does not fail the job: wait (as long as Microsoft asks) and poll again.
    return pollReport<string | null>(async () => {
      const status = (await this.call(`${this.reporting}GenerateReport/Poll`, a, { ReportRequestId: id }, `PollGenerateReport ${id}`, signal))?.ReportRequestStatus;
      if (status?.Status === "Success") return { ready: typeof status.ReportDownloadUrl === "string" && status.ReportDownloadUrl ? status.ReportDownloadUrl : null };
      if (status?.Status === "Error") return { failed: unavailable(`report ${id}: Microsoft Advertising could not generate it (status Error)`, "report_error") };
      if (status?.Status !== "Pending") return { failed: unavailable(`report ${id}: unexpected status ${JSON.stringify(status?.Status)}`, "report_status") };
      return { pending: "Pending" };
    }, { firstMs: firstWaitMs, stepMs: this.pollMs, maxMs: Math.max(MAX_POLL_MS, this.pollMs), budgetMs: this.timeoutMs, retries: MAX_POLL_RETRIES },
    () => unavailable(`report ${id}: still Pending after ${Math.round(this.timeoutMs / 1000)} s`, "report_timeout"), signal);
  }

  /** GETs the signed URL without our credentials; a timeout covers the answer's head, not the (pulled) body. */
  private download(url: string, signal?: AbortSignal): Promise<ProviderDownload> {
    return http.download("report download", url, { signal, env: this.ctx.env });
  }

  /** The ZIP's CSV rows, normalised, in pages; bytes are read only when the consumer wants more rows. */
  private async *rows(body: ReadableStream<Uint8Array>, q: ReportQuery, groups: Set<string> | null, signal?: AbortSignal): AsyncGenerator<ReportRow[]> {
    const reader = body.getReader();
    const csv = new CsvReader();
    const decoder = new TextDecoder("utf-8"); // strips the BOM Microsoft writes
    const records: string[][] = [];
    let files = 0;
    let ended = false;
    let failure: Error | null = null;
    const unzip = new Unzip((file) => {
      // One CSV per report; anything else in the archive is not ours to read.
      if (files++ > 0 || !/\.csv$/i.test(file.name)) return;
      file.ondata = (err, data, final) => {
        if (err) { failure = err; return; }
        try {
          csv.push(decoder.decode(data, { stream: !final }), records);
          if (final) { csv.end(records); ended = true; }
        } catch (e) { failure = e as Error; }
      };
      file.start();
    });
    unzip.register(UnzipInflate);

    let index: Record<string, number> | null = null;
    let page: ReportRow[] = [];
    const take = () => {
      for (const rec of records) {
        if (!index) {
          // The column names' record (report header metadata, if any, comes before it as one-field records).
          if (!rec.includes("CampaignId")) continue;
          index = Object.fromEntries(rec.map((name, i) => [name.trim(), i]));
          continue;
        }
        if (rec.length < 2) continue; // footer metadata ("©2026 Microsoft Corporation...")
        const row = this.rowOf(rec, index, q);
        if (groups && !groups.has(row.ad_group_id ?? "")) continue;
        page.push(row);
      }
      records.length = 0;
    };
    try {
      for (;;) {
        if (signal?.aborted) throw signal.reason;
        take();
        while (page.length >= PAGE_ROWS) {
          const out = page.slice(0, PAGE_ROWS);
          page = page.slice(PAGE_ROWS);
          yield out;
        }
        if (failure) throw failure;
        if (ended) break;
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try { chunk = await reader.read(); } catch (err) {
          if (signal?.aborted) throw signal.reason;
          throw unavailable(`report download broke off (${(err as Error).message})`, "download_failed");
        }
        if (chunk.done) {
          unzip.push(new Uint8Array(0), true);
          take();
          if (failure) throw failure;
          if (!ended) throw unavailable(files ? "report download ended before the CSV did" : "report download held no CSV", "bad_zip");
          break;
        }
        try { unzip.push(chunk.value); } catch (err) { throw unavailable(`report ZIP unreadable (${(err as Error).message})`, "bad_zip"); }
      }
      if (failure) throw failure;
      if (page.length) yield page;
    } catch (err) {
      if (err instanceof ProviderError || signal?.aborted) throw err;
      throw unavailable(`report unreadable (${(err as Error).message})`, "bad_report");
    } finally {
      // A consumer that stops early (or an abort) closes the download instead of draining it.
      reader.cancel().catch(() => {});
    }
  }

  private rowOf(rec: string[], index: Record<string, number>, q: ReportQuery): ReportRow {
    const get = (name: string): string | undefined => (index[name] === undefined ? undefined : rec[index[name]]);
    const text = (name: string) => { const v = get(name)?.trim(); return v ? v : null; };
    const campaignId = text("CampaignId");
    if (!campaignId) throw unavailable("report: a row without CampaignId", "bad_row");
    let date: string | null = null;
    if (q.granularity === "day") {
      date = (get("TimePeriod") ?? "").trim();
      if (!isDate(date)) throw unavailable(`report: TimePeriod ${JSON.stringify(date)} is not a day`, "bad_row");
    }
    const level = q.level;
    return {
      date,
      campaign_id: campaignId,
      campaign_name: text("CampaignName"),
      ad_group_id: level === "campaign" && index.AdGroupId === undefined ? null : text("AdGroupId"),
      ad_group_name: level === "campaign" && index.AdGroupId === undefined ? null : text("AdGroupName"),
      ad_id: level === "ad" ? text("AdId") : null,
      ad_name: level === "ad" ? text("AdTitle") : null,
      impressions: countOf(get("Impressions") ?? "", "impressions"),
      clicks: countOf(get("Clicks") ?? "", "clicks"),
      spend_micros: microsOf(get("Spend") ?? ""),
      conversions: conversionsOf(get("Conversions")),
    };
  }
}

export const microsoftAdsReporting: AdsReporting = {
  capabilities,
  client: (ctx) => new MicrosoftAdsReportingClient(ctx),
};
