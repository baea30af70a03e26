// Tag descriptions of the OpenAPI document: the flows that span several operations, with an example each (the
// operations themselves are described where they are defined).

const ADS_FLOW = `Turn the account's rising trends into targeting on mapped campaign entities, like \`terraform plan\` / \`apply\`.

1. \`GET /api/integrations/ads/providers\` (\`configured\`: this server has the provider's OAuth client) → \`GET /api/integrations/ads/{platform}/auth\` → open \`authorization_url\` in a browser (one OAuth flow for every provider).
2. \`PUT …/selection\` \`{"trend_category":"tech","strict_safety":true}\`: the connection's only ad account is used; when it reaches several (\`GET …/accounts\`), add \`"account_id":"1234567890"\` (else entities, mappings and preview answer 422 \`ad_account_required\` naming them). \`GET …/selection\` reads it back.
3. \`GET …/entities\` → \`PUT …/mappings\` \`{"entities":[{"id":"5551","field":"keywords"}]}\` (each id checked at the provider: 422 naming \`entities.<i>.id\` when the ad account has no such entity). \`GET …/mappings\` reads it back.
4. \`POST …/preview\` → 201, a plan:
\`\`\`json
{"id":"pln_…","status":"previewed","changes":[{"id":"c1","entity_id":"5551","field":"keywords","op":"add","item":{"key":"ai agents|PHRASE","text":"ai agents","match_type":"PHRASE"},"trend_id":"trd_…"}],
 "diff":[{"entity_id":"5551","field":"keywords","before":["machine learning"],"after":["machine learning","ai agents"],"changes":[{"change_id":"c1","op":"add","item":"ai agents","trend":"AI agents"}]}],
 "refused":[{"item":"casino night","rule":"blocklist","reason":"…"}],"dry_run":{"ran":true,"passed":true,"by":"provider","results":[…]},
 "calls":[{"method":"POST","path":"customers/1234567890/adGroupCriteria:mutate","body":{…},"change_ids":["c1"]}],
 "prior_state_hash":"sha256:…","plan_hash":"sha256:…","requires_acknowledgement":false,"expires_at":"…","empty_reason":null,"empty_detail":null}
\`\`\`
   A plan with no change says why in \`empty_reason\` (\`no_rising_trends\`, \`no_interest_matched\`, \`no_keyword_matched\`, \`already_targeted\`, \`all_refused\`) and \`empty_detail\` (what was searched where). Nothing mapped yet: 409 \`nothing_mapped\`.
5. \`POST …/apply\` \`{"plan_id":"pln_…"}\` (+ \`Idempotency-Key\`; \`"acknowledged_plan_hash"\` when \`requires_acknowledgement\`) → 202 \`{"run_id":…,"status":"applying"}\`.
   Poll \`GET …/plans/{id}\`: \`applied\`, \`partially_applied\` (refusals marked \`review\`; an operator item when chat is connected), \`failed\`, or \`refused\` (the targets changed since the preview: nothing written).
6. \`POST …/plans/{id}/rollback\` → a new plan undoing it; apply that the same way. \`GET …/runs\` lists runs.

strict_safety (on by default): additions only; at most 10 changes per entity and 50 per plan; trends at least \`medium\`, not negative, not on the blocklist; a dry run must pass (the provider's, or the connector's own checks where it has none, and then the plan must be acknowledged); plans expire (ADS_PLAN_TTL_SECONDS). Budgets, bids and schedules are never written.`;

const EXECUTOR_FLOW = `For callers that make the provider writes themselves (their runtime, their credential vault).

1. Preview as usual, then \`POST /api/integrations/ads/{platform}/executor/plans\` \`{"plan_id":"pln_…"}\` → 201
\`\`\`json
{"plan_id":"pln_…","run_id":"run_…","kid":"…","jwks_url":"https://…/.well-known/executor-keys","expires_at":"…",
 "executor_plan":"eyJhbGciOiJFZERTQSIsImtpZCI6Ii4uLiIsInR5cCI6InRyZW5kZ2F0ZS1leGVjdXRvci1wbGFuK2p3dCJ9.…",
 "plan":{"plan_id":"pln_…","provider":"google_ads","ad_account_id":"1234567890","plan_hash":"sha256:…","prior_state_hash":"sha256:…",
  "steps":[{"seq":1,"change_ids":["c1"],
    "request":{"method":"POST","url":"https://googleads.googleapis.com/v25/customers/1234567890/adGroupCriteria:mutate","headers":{"content-type":"application/json"},"body":{"operations":[…],"partialFailure":true,"validateOnly":false},"credentials":"Authorization: Bearer <access token>"},
    "dry_run":{…the same with "validateOnly":true…},
    "precondition":{"targets":[{"entity_id":"5551","field":"keywords","items":[{"key":"machine learning|PHRASE","text":"machine learning"}]}],"state_hash":"sha256:…"},
    "rollback":[{"method":"POST","url":"…:mutate","body":{"operations":[{"remove":"{{resource:c1}}"}],…},…}]}],
  "report":{"url":"https://…/api/integrations/ads/executor/results","by":"…"}}}
\`\`\`
2. Verify \`executor_plan\` (a JWT, EdDSA/Ed25519, \`typ\` trendgate-executor-plan+jwt) with the JWKS: \`aud\` is your account id, \`jti\` the plan id; execute the \`plan\` claim of the verified token, not the plain copy. Refuse it after \`exp\`.
3. Per step: read the targets and compare with \`precondition.targets\` (different: do not run it, report \`skipped\` with \`precondition_held: false\`); run \`dry_run\` where present; run \`request\` with your token as \`credentials\` says.
4. \`POST /api/integrations/ads/executor/results\` once (an \`Idempotency-Key\` makes a retried report safe):
\`\`\`json
{"executor_plan":"<the token as issued>","executed_at":"2026-11-23T12:00:00Z",
 "steps":[{"seq":1,"status":"succeeded","http_status":200,"request_id":"…","changes":[{"change_id":"c1","ok":true,"resource":"customers/1234567890/adGroupCriteria/5551~123"}]}]}
\`\`\`
   → 200, the plan as recorded (same statuses as our own runs). A tampered token, another account's, or one past its report window → 422; a second report → 409.`;

const REPORTING_FLOW = `One table across the ads providers the account connected (each with a selection: its \`account_id\`, or the connection's only ad account).

1. \`GET /api/integrations/ads/reporting/catalog\`: dimensions (date in the ad account's time zone, provider, account, campaign, ad group, ad), metrics (impressions, clicks, spend_micros + currency, conversions as each provider defines them, ctr and cpc_micros computed by us), and per provider its levels, granularities, range and lookback limits and definitions.
2. \`POST /api/integrations/ads/reporting/preview?limit=100\` with a report request:
\`\`\`json
{"providers":["google_ads","meta_ads"],"from":"2026-11-01","to":"2026-11-07","granularity":"day","level":"ad_group","filters":{"changed_by_trendgate":true}}
\`\`\`
   → \`{"data":[{"date":"2026-11-01","provider":"google_ads","account_id":"1234567890","campaign_id":"…","ad_group_id":"…","impressions":1200,"clicks":31,"spend_micros":"8450000","currency":"USD","conversions":2,"ctr":0.025833,"cpc_micros":"272580"}],"next_cursor":"…","providers":[{"provider":"meta_ads","status":"failed","error":{"kind":"rate_limited","message":"…"}}]}\`
   A provider that fails is reported in \`providers\`; the others' rows still come.
3. \`POST /api/integrations/ads/reporting/exports\` (same body): 200 \`text/csv\` when small; else 202 \`{"id":"rpx_…","status":"queued"}\`. Poll \`GET …/exports/{id}\` (\`rows_written\` grows while \`running\`), then \`GET …/exports/{id}/download\` when \`ready\`. \`DELETE …/exports/{id}\` cancels or deletes.`;

const TRENDS_FLOW = `Trends are detected from the account's signals by a pass every \`DETECTION_INTERVAL_SECONDS\` over each topic's own history
(a week by default; every setting in time, so any bucket width behaves): a burst, ramp, plateau or level shift against
the topic's daily and weekly rhythm and its own usual noise (a topic whose normal includes near-daily spikes does not
alert on them). The bucket in progress is assessed too, once 5 minutes in, and alerts when what arrived so far already
makes the whole bucket clearly anomalous (the rest counted a standard deviation short of the expected rate, a score of
at least 7): a 4x burst within about 28 minutes at 50 mentions/h, 12 at 600/h; a 10x one within 3-10 minutes; a
marginal hour when it closes; ramps and plateaus within hours.

Events (webhooks, chat, workflow pushes and \`/api/stream\` all get the same stream), one trend per burst:
- \`trend.detected\`: a topic becomes a trend (its velocity is never negative), or a later wave of an open trend (after 6 h
  without an anomalous bucket) outgrows it (above a \`low\` trend, or two levels above a stronger one);
- \`trend.severity_changed\`: only once the new severity has held for \`DETECTION_SEVERITY_HOLD_SECONDS\` (30 min);
- \`trend.velocity_changed\`: velocity moved 50 %, at most once per trend per \`DETECTION_VELOCITY_EVENT_MIN_SECONDS\` (3 h), closed buckets only;
- \`trend.cooling\`: the first calm closed hour after the last anomalous one, once per wave: the trend is cooling down (only \`event_types\` subscriptions listing it receive it);
- \`trend.ended\`: no bucket has been anomalous for \`DETECTION_END_AFTER_HOURS\` (12 h), judged on closed buckets (a second wave before that continues the trend).

Webhook bodies keep the fields the API fixes; each delivery names its event and trend in the \`X-Webhook-Event-Type\` and
\`X-Webhook-Trend-Id\` headers. \`trend.ended\` fires only \`trigger_type: trend_ended\` subscriptions (threshold: the
severity rank it ended with, 0 = all) and \`trigger_type: event_types\` ones listing it; a subscription's \`filter\`
(minimum severity, sentiment range, a MongoDB-style \`match\` on the event's fields) and custom \`headers\` apply to
every trigger type; chat cards of open items say the trend has ended; workflow pushes carry it in \`data.type\`.

\`timestamp\` is the start of the bucket the trend was measured in, not the moment of detection. \`source_link\` opens the
trend's briefing page without an API key (see "Trend briefings"); the JSON stays at \`GET /api/trends/{id}\`.`;

const CONSOLE_FLOW = `A web console per customer account at \`/console/\`, opened by one-time links (no passwords), embeddable in your product.

1. Your backend: \`POST /api/console/sessions\` \`{"label":"ops@example.com"}\` (API key) → 201 with \`url\`, e.g. \`https://…/console/?s=cs_…#token=tgcl_…\`, shown only here.
2. The person opens it (or your page loads it in an iframe): the page exchanges the token once (\`POST /api/console/sessions/exchange\` → \`access_token\`, \`tgcs_…\`) and removes it from the address bar. The link works once, until \`link_expires_at\` (default 15 min); the session lasts \`session_hours\` (default 8).
3. The access token is a bearer credential for that account on every route, except keys, sessions and console settings (403 \`api_key_required\`). Another account's ids answer 404.
4. \`DELETE /api/console/sessions/{id}\` revokes at once on every gateway; so does revoking the key that created the session (\`DELETE /api/keys/{id}\`, unless \`?end_sessions=false\`). \`PUT /api/console/settings\` \`{"frame_ancestors":["https://app.example.com"]}\` lets those origins frame the console (CSP frame-ancestors; none by default).

See docs/console.md.`;

export const TAG_DOCS: { name: string; description: string }[] = [
  { name: "Trends", description: TRENDS_FLOW },
  { name: "Ads connectors", description: ADS_FLOW },
  { name: "Ads executor", description: EXECUTOR_FLOW },
  { name: "Ads reporting", description: REPORTING_FLOW },
  { name: "Console", description: CONSOLE_FLOW },
];
