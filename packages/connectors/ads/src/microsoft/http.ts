import { ProviderHttp } from "@trendgate/connector-core";
import { ADS_RESPONSE_LIMITS } from "../kind.ts";
import { PROVIDER } from "./errors.ts";

/** This provider's one HTTP path (API, token endpoint, report files); it declares no rate-limit headers of its own. */
export const http = new ProviderHttp(PROVIDER, undefined, ADS_RESPONSE_LIMITS);
