import { LogLevel, WebClient } from "@slack/web-api";
import { ProviderHttp, type ProviderEnv } from "@trendgate/connector-core";

// One way to build the official client: our outbox retries and paces, so the client must not (no retries, a 429 is
// an error at once carrying Retry-After), and a hung Slack must not hold a worker or a gateway request forever. Its
// requests take the connectors' one outbound path (ProviderHttp.sdkFetch): the SSRF guard, the size cap, our timeouts.

/** Per request; Slack answers in well under a second normally. */
export const SLACK_TIMEOUT_MS = 10_000;
/** Slack's answers are small (a page of 1,000 channels is about 1 MB); more is not Slack. */
export const SLACK_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

const http = new ProviderHttp("slack");

/** `env`: the configuration's environment (its OUTBOUND_ALLOWLIST picks the guard; else the process's). */
export const webClient = (baseUrl: string, token?: string, env?: ProviderEnv): WebClient =>
  new WebClient(token, {
    slackApiUrl: baseUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: SLACK_TIMEOUT_MS,
    allowAbsoluteUrls: false,
    fetch: http.sdkFetch({ env, timeoutMs: SLACK_TIMEOUT_MS, maxResponseBytes: SLACK_MAX_RESPONSE_BYTES }),
    // Failures reach our own logs as ProviderErrors; the client's console logger would only repeat them.
    logLevel: LogLevel.ERROR,
  });
