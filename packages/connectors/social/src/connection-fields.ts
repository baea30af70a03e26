import { z } from "zod";
import { CategoryPath, OutboundUrl, text } from "@trendgate/contracts";

// Fields every social provider's connection body is built from (PUT /api/integrations/social/{provider}/connection):
// `{credentials, terms, options, base_url}` is the shape the generic route stores; credentials and options are the
// provider's own.

export const secret = text({ min: 1, max: 4096, trim: true });
export const ProviderUrl = OutboundUrl
  .meta({ description: "Overrides the provider's default API address (for proxies and tests)" });
export const Term = text({ min: 1, max: 200, trim: true });
export const terms = (min: number) =>
  z.array(Term).min(min).max(50).transform((t) => [...new Set(t)]).meta({ description: "Terms (search queries) to track; each becomes a topic of the produced signals" });
export const category = CategoryPath.optional().meta({ description: "Category of the produced signals (default `social/<provider>`)" });
