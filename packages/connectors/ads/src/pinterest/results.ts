import { ProviderError } from "@trendgate/connector-core";
import type { ChangeResult, ProviderCall } from "../kind.ts";
import { PROVIDER } from "./errors.ts";

// Pinterest answers a targeting write with HTTP 200 whatever became of each item, so a change's result is read from
// the answer's items: the ad-group PATCH's `items` (aligned with the ad groups sent: `data` when written,
// `exceptions` when not; one ad group per call, so every change of the call shares it), and the keyword answers'
// `keywords` (written) and `errors` (`data` naming the keyword, `error_messages` why). An exception's message that
// names an interest id (Pinterest retires interests) is repeated up front.

/** One result per change from a 200 answer's per-item data, exceptions and errors. */
export function resultsOf(call: ProviderCall, body: any, status: number, requestId?: string): ChangeResult[] {
  const fail = (id: string, message: string, code?: string): ChangeResult =>
    ({ change_id: id, ok: false, request_id: requestId, error: new ProviderError(PROVIDER, "bad_request", message, { status, providerCode: code ?? "item_error" }) });
  if (call.path.endsWith("/ad_groups")) {
    const item = (Array.isArray(body.items) ? body.items : [])[0];
    const group = String((call.body as { id: string }[])[0].id);
    const ex = Array.isArray(item?.exceptions) ? item.exceptions : [];
    if (item?.data && !ex.length) return call.change_ids.map((id) => ({ change_id: id, ok: true, request_id: requestId, resource: String(item.data.id ?? group) }));
    const said = ex.map((e: { code?: number; message?: string }) => `${e.code ?? "?"}: ${e.message ?? ""}`.trim()).join("; ") || "not in Pinterest's answer";
    const culprit = (said.match(/\b(\d{6,18})\b/g) ?? []).find((i: string) => i !== group);
    return call.change_ids.map((id) => fail(id, `${culprit ? `interest ${culprit} refused; ` : ""}ad group ${group} not written: ${said}`, ex[0]?.code !== undefined ? String(ex[0].code) : undefined));
  }
  const errors = (Array.isArray(body.errors) ? body.errors : []) as { data?: { id?: string; value?: string; match_type?: string }; error_messages?: string[] }[];
  const done = (Array.isArray(body.keywords) ? body.keywords : []) as { id: string; value: string; match_type: string }[];
  const sent = (call.body as { keywords: { id?: string; value?: string; match_type?: string }[] }).keywords;
  const keyOf = (k: { value?: string; match_type?: string }) => `${String(k.value ?? "").toLowerCase()}|${k.match_type ?? ""}`;
  return sent.map((k, i): ChangeResult => {
    const id = call.change_ids[i];
    const byId = k.id !== undefined;
    const err = errors.find((e) => (byId ? String(e.data?.id) === k.id : keyOf(e.data ?? {}) === keyOf(k)));
    if (err) return fail(id, `keyword ${byId ? k.id : `"${k.value}"`} refused: ${(err.error_messages ?? []).join("; ") || "error"}`);
    const ok = done.find((d) => (byId ? String(d.id) === k.id : keyOf(d) === keyOf(k)));
    return ok ? { change_id: id, ok: true, request_id: requestId, resource: String(ok.id) } : fail(id, "not in Pinterest's answer");
  });
}
