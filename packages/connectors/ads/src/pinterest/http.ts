import { ProviderHttp, type RateLimitRules } from "@trendgate/connector-core";
import { ADS_RESPONSE_LIMITS } from "../kind.ts";
import { PROVIDER } from "./errors.ts";

/** Envoy's rate-limit headers (the reset in seconds from now); the manifest declares the same rules. */
export const RATE_LIMIT = { resetHeader: "x-ratelimit-reset", resetUnit: "seconds", remainingHeader: "x-ratelimit-remaining", limitHeader: "x-ratelimit-limit" } as const satisfies RateLimitRules;

/** Pinterest's one HTTP path (API, token endpoint, report files). */
export const http = new ProviderHttp(PROVIDER, RATE_LIMIT, ADS_RESPONSE_LIMITS);
