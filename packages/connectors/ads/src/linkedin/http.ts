import { ProviderHttp } from "@trendgate/connector-core";
import { PROVIDER } from "./errors.ts";

/** This provider's one HTTP path (API, token endpoint, report files); it declares no rate-limit headers of its own. */
export const http = new ProviderHttp(PROVIDER);
