import { LogLevel, WebClient } from "@slack/web-api";

// One way to build the official client: our outbox retries and paces, so the client must not (no retries, a 429 is
// an error at once carrying Retry-After), and a hung Slack must not hold a worker or a gateway request forever.

/** Per request; Slack answers in well under a second normally. */
export const SLACK_TIMEOUT_MS = 10_000;

export const webClient = (baseUrl: string, token?: string): WebClient =>
  new WebClient(token, {
    slackApiUrl: baseUrl,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: SLACK_TIMEOUT_MS,
    allowAbsoluteUrls: false,
    // Failures reach our own logs as ProviderErrors; the client's console logger would only repeat them.
    logLevel: LogLevel.ERROR,
  });
