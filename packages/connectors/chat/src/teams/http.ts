import { ProviderHttp } from "@trendgate/connector-core";
import { RATE_LIMIT } from "./errors.ts";

/** This provider's one HTTP path: Graph, the token endpoints, the Bot Framework Connector and its signing keys. */
export const http = new ProviderHttp("teams", RATE_LIMIT);
