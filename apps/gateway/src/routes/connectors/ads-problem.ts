import { AdAccountChoiceError, AdsPlanError } from "@trendgate/ads";
import type { ConnectionRow } from "@trendgate/db";
import { ApiError } from "../../http/api-error.ts";
import type { GatewayDeps } from "../../deps.ts";
import { providerProblem } from "./provider-problem.ts";

/**
 * What an ads service threw, as the caller's problem: a plan that may not be previewed, applied or rolled back as
 * asked keeps its code and fields; a provider failure is mapped as on every connector route (once the connection
 * is known); anything else is rethrown.
 */
export async function adsProblem(deps: GatewayDeps, conn: ConnectionRow | undefined, err: unknown, p: { name: string; reconnect: string }): Promise<never> {
  if (!conn || err instanceof AdsPlanError) return planProblem(err);
  return providerProblem(deps, conn, err, p);
}

/** A plan that may not be run or recorded as asked, with its code and fields; anything else is rethrown. */
export function planProblem(err: unknown): never {
  if (err instanceof AdsPlanError) throw new ApiError(err.code, err.message, err.errors ? { errors: err.errors } : {});
  throw err;
}

/** No ad account is selected and the connection does not reach exactly one: 422 naming the ones it reaches. */
export function adAccountRequired(err: AdAccountChoiceError, base: string): ApiError {
  return new ApiError("ad_account_required", `No ad account is selected and ${err.message}: PUT ${base}/selection with account_id (GET ${base}/accounts lists them)`, {
    errors: [{ location: "body", path: "account_id", message: err.accounts.length ? `required: one of ${err.accounts.map((a) => a.id).join(", ")}` : "no ad account is reachable", code: "ad_account_required" }],
  });
}
