import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ADS_APPROVAL_EVENT_TYPE, ESCALATION, OPERATOR_ITEM_SOURCES, SEVERITIES, TREND_EVENT_TYPES } from "@trendgate/contracts/vocabulary";
import { api, asApiError, get, type ApiError } from "../api.ts";
import { useChannels, type ChannelCache } from "../chat-channels.ts";
import { EmptyState, Loading } from "../components/EmptyState.tsx";
import { ErrorBanner, Notice } from "../components/ErrorBanner.tsx";
import { Field } from "../components/Field.tsx";
import { PageHeader } from "../components/Layout.tsx";
import { plural } from "../format.ts";
import { useLoad, useTitle } from "../hooks.ts";
import type { ChatProviderList, EscalationStep, OperatorRoute, OperatorRoutes, OperatorRoutesBody, RouteMatch, SocialProviderList, Webhook, WebhookList } from "../types.ts";

// Operator routing rules (first match wins) and their escalation steps, edited as drafts and saved with one PUT of the
// whole ordered list. A 422 names fields by index (`routes.1.escalation.0.type`); the page maps each path to the draft
// it was sent from (rules and steps keep a key of their own), so a message stays by its field after a reorder. The chat
// providers and the signal sources a rule may name are the API's provider lists (the connector registry).

const ROUTES = "/api/operator/routes";
const EVENT_TYPES = [...TREND_EVENT_TYPES, ADS_APPROVAL_EVENT_TYPE];

type StepType = EscalationStep["type"];
const STEP_TYPES: Record<StepType, [label: string, add: string]> = {
  wait: ["Wait", "Add a wait"], notify: ["Notify people", "Add a notification"],
  notify_on_call: ["Notify whoever is on call", "Add an on-call notification"],
  notify_webhook: ["Notify a webhook", "Add a webhook notification"], repeat: ["Repeat", "Add a repeat"],
};
type MentionKind = "user" | "group" | "channel";
const MENTION_KINDS: Record<MentionKind, string> = { user: "A person", group: "A user group", channel: "Everyone in the channel" };

interface Mention { kind: MentionKind; id: string; name: string }
interface StepDraft { key: number; type: StepType; minutes: string; mentions: Mention[]; message: string; webhook_id: string; schedule_id: string; times: string }
interface RuleDraft {
  /** The stored rule's id (none for a rule added here): sent back so a save keeps it, and its open items their rule. */
  id?: string;
  key: number; name: string; categories: string; min_severity: string; sources: string; event_types: string[];
  provider: string; channel_id: string; escalation: StepDraft[];
}
/** Validation messages by draft: `r<rule key>.<field>`, `s<step key>.<field>`, or the API's path when it names neither. */
type Errs = Record<string, string>;

let lastKey = 0;
const newStep = (type: StepType): StepDraft =>
  ({ key: ++lastKey, type, minutes: "10", mentions: [{ kind: "user", id: "", name: "" }], message: "", webhook_id: "", schedule_id: "", times: "1" });
const newRule = (provider: string): RuleDraft =>
  ({ key: ++lastKey, name: "", categories: "", min_severity: "", sources: "", event_types: [], provider, channel_id: "", escalation: [] });

function stepDraft(s: EscalationStep): StepDraft {
  const d = newStep(s.type);
  if (s.type === "wait") d.minutes = String(s.minutes);
  if (s.type === "repeat") d.times = String(s.times);
  if (s.type === "notify_webhook") d.webhook_id = s.webhook_id;
  if (s.type === "notify_on_call") { d.schedule_id = s.schedule_id; d.message = s.message ?? ""; }
  if (s.type === "notify") {
    d.mentions = s.mentions.map((m) => ({ kind: m.kind, id: m.id ?? "", name: m.name ?? "" }));
    d.message = s.message ?? "";
  }
  return d;
}

const ruleDraft = (r: OperatorRoute): RuleDraft => ({
  id: r.id, key: ++lastKey, name: r.name, categories: (r.match.categories ?? []).join(", "), min_severity: r.match.min_severity ?? "",
  sources: (r.match.sources ?? []).join(", "), event_types: r.match.event_types ?? [], provider: r.provider, channel_id: r.channel_id,
  escalation: r.escalation.map(stepDraft),
});

const list = (v: string) => v.split(",").map((x) => x.trim()).filter(Boolean);
/** A number field as sent: empty is not 0 (the API then names the field). */
const num = (v: string) => (v.trim() === "" ? NaN : Number(v));
const opt = (v: string) => (v.trim() ? v.trim() : undefined);

function stepBody(s: StepDraft): EscalationStep {
  switch (s.type) {
    case "wait": return { type: "wait", minutes: num(s.minutes) };
    case "repeat": return { type: "repeat", times: num(s.times) };
    case "notify_webhook": return { type: "notify_webhook", webhook_id: s.webhook_id.trim() };
    case "notify_on_call": return { type: "notify_on_call", schedule_id: s.schedule_id.trim(), message: opt(s.message) };
    case "notify": return {
      type: "notify", message: opt(s.message),
      mentions: s.mentions.map((m) => ({ kind: m.kind, id: m.kind === "channel" ? undefined : opt(m.id), name: opt(m.name) })),
    };
  }
}

function matchBody(r: RuleDraft): RouteMatch {
  const m: RouteMatch = {};
  if (list(r.categories).length) m.categories = list(r.categories);
  if (r.min_severity) m.min_severity = r.min_severity as RouteMatch["min_severity"];
  if (list(r.sources).length) m.sources = list(r.sources);
  if (r.event_types.length) m.event_types = r.event_types as RouteMatch["event_types"];
  return m;
}

const toBody = (rules: RuleDraft[], def: StepDraft[]): OperatorRoutesBody => ({
  routes: rules.map((r) => ({ ...(r.id ? { id: r.id } : {}), name: r.name.trim(), match: matchBody(r), provider: r.provider, channel_id: r.channel_id.trim(), escalation: r.escalation.map(stepBody) })),
  default_escalation: def.map(stepBody),
});

/** The 422's paths re-keyed to the drafts that were sent; `rules`: the keys of the rules they name. */
function keyed(fields: Record<string, string>, rules: RuleDraft[], def: StepDraft[]): { errs: Errs; rules: number[] } {
  const errs: Errs = {};
  const hit: number[] = [];
  for (const [path, message] of Object.entries(fields)) {
    const p = path.split(".");
    let at = path;
    let steps: StepDraft[] | undefined;
    let rest = p;
    const rule = p[0] === "routes" ? rules[Number(p[1])] : undefined;
    if (rule) {
      hit.push(rule.key);
      if (p[2] === "escalation" && p.length > 3) { steps = rule.escalation; rest = p.slice(3); }
      else at = [`r${rule.key}`, ...p.slice(2)].join(".").replace(/^(r\d+\.match\.\w+)\.\d+$/, "$1");
    } else if (p[0] === "default_escalation" && p.length > 1) { steps = def; rest = p.slice(1); }
    const step = steps?.[Number(rest[0])];
    if (step) at = [`s${step.key}`, ...rest.slice(1)].join(".");
    errs[at] ??= message;
  }
  return { errs, rules: hit };
}

const move = <T,>(xs: T[], i: number, by: number) => {
  const j = i + by;
  if (j < 0 || j >= xs.length) return xs;
  const out = [...xs];
  [out[i], out[j]] = [out[j], out[i]];
  return out;
};

// ---- Summaries --------------------------------------------------------------------------------------------------------

const webhookLabel = (w: Webhook) => w.description || w.url;

function matchText(r: RuleDraft): string {
  const parts = [
    list(r.categories).length ? `categories ${list(r.categories).join(", ")}` : "",
    r.min_severity ? `${r.min_severity} severity and up` : "",
    list(r.sources).length ? `sources ${list(r.sources).join(", ")}` : "",
    r.event_types.length ? `events ${r.event_types.join(", ")}` : "",
  ].filter(Boolean);
  return parts.length ? parts.join("; ") : "every item";
}

function stepsText(steps: StepDraft[], hooks: Webhook[]): string {
  if (!steps.length) return "none";
  const one = (s: StepDraft) => {
    switch (s.type) {
      case "wait": return `wait ${s.minutes || "?"} min`;
      case "repeat": return `repeat ${plural(num(s.times) || 0, "time")}`;
      case "notify_webhook": {
        const w = hooks.find((h) => h.id === s.webhook_id);
        return `notify the webhook ${w ? webhookLabel(w) : s.webhook_id || "?"}`;
      }
      case "notify_on_call": return `notify whoever is on call in ${s.schedule_id || "?"}`;
      case "notify": return `notify ${s.mentions.map((m) => (m.kind === "channel" ? "@channel" : `@${m.name || m.id || "?"}`)).join(" ")}`;
    }
  };
  const text = steps.map(one).join(", then ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Move up, Move down and Remove for the `n`th of `count` (rules, steps), named for screen readers ("Move up step 2"). */
function Reorder({ what, n, count, onMove, onRemove, remove, children }: {
  what: string; n: number; count: number; onMove: (by: number) => void; onRemove: () => void; remove: string; children?: ComponentChildren;
}) {
  const hidden = <span class="visually-hidden"> {what}</span>;
  return (
    <div class="row-actions" role="group" aria-label={`Actions for ${what}`}>
      {children}
      <button type="button" class="btn btn-quiet btn-small" disabled={n === 1} onClick={() => onMove(-1)}>Move up{hidden}</button>
      <button type="button" class="btn btn-quiet btn-small" disabled={n === count} onClick={() => onMove(1)}>Move down{hidden}</button>
      <button type="button" class="btn btn-quiet btn-small" onClick={onRemove}>{remove}{hidden}</button>
    </div>
  );
}

// ---- Escalation steps ---------------------------------------------------------------------------------------------------

interface StepsProps { steps: StepDraft[]; onChange: (s: StepDraft[]) => void; errs: Errs; hooks: Webhook[] | null }

function MentionsEditor({ step: s, onChange, errs }: { step: StepDraft; onChange: (m: Mention[]) => void; errs: Errs }) {
  const id = `st-${s.key}`;
  const set = (i: number, m: Partial<Mention>) => onChange(s.mentions.map((x, j) => (j === i ? { ...x, ...m } : x)));
  return (
    <fieldset>
      <legend>Mention</legend>
      {errs[`s${s.key}.mentions`] && <p class="field-error">{errs[`s${s.key}.mentions`]}</p>}
      {s.mentions.map((m, i) => (
        <div class="inline-form" key={i}>
          <Field id={`${id}-m${i}-kind`} label="Who" error={errs[`s${s.key}.mentions.${i}.kind`]}>
            {(a) => (
              <select {...a} value={m.kind} onChange={(e) => set(i, { kind: e.currentTarget.value as MentionKind })}>
                {(Object.keys(MENTION_KINDS) as MentionKind[]).map((k) => <option key={k} value={k}>{MENTION_KINDS[k]}</option>)}
              </select>
            )}
          </Field>
          {m.kind !== "channel" && (
            <Field id={`${id}-m${i}-id`} label={m.kind === "user" ? "User id" : "Group id"} error={errs[`s${s.key}.mentions.${i}.id`]}
              hint="Slack U… or S…; Teams: the AAD object id">
              {(a) => <input {...a} type="text" autoComplete="off" maxLength={100} value={m.id} onInput={(e) => set(i, { id: e.currentTarget.value })} />}
            </Field>
          )}
          <Field id={`${id}-m${i}-name`} label="Display name (optional)" error={errs[`s${s.key}.mentions.${i}.name`]}>
            {(a) => <input {...a} type="text" autoComplete="off" maxLength={100} value={m.name} onInput={(e) => set(i, { name: e.currentTarget.value })} />}
          </Field>
          {s.mentions.length > 1 && (
            <button type="button" class="btn btn-quiet btn-small" onClick={() => onChange(s.mentions.filter((_, j) => j !== i))}>
              Remove mention<span class="visually-hidden"> {i + 1}</span>
            </button>
          )}
        </div>
      ))}
      {s.mentions.length < 10 && (
        <button type="button" class="btn btn-small" onClick={() => onChange([...s.mentions, { kind: "user", id: "", name: "" }])}>Add a mention</button>
      )}
    </fieldset>
  );
}

function StepEditor({ step: s, n, count, onChange, onMove, onRemove, errs, hooks }: {
  step: StepDraft; n: number; count: number; onChange: (s: StepDraft) => void; onMove: (by: number) => void; onRemove: () => void;
  errs: Errs; hooks: Webhook[] | null;
}) {
  const id = `st-${s.key}`;
  const e = (f: string) => errs[`s${s.key}.${f}`];
  const set = <K extends keyof StepDraft>(k: K, v: StepDraft[K]) => onChange({ ...s, [k]: v });
  return (
    <fieldset class="step">
      <legend>Step {n}: {STEP_TYPES[s.type][0].toLowerCase()}</legend>
      <div class="inline-form">
        <Field id={`${id}-type`} label="Type" error={e("type")}>
          {(a) => (
            <select {...a} value={s.type} onChange={(ev) => set("type", ev.currentTarget.value as StepType)}>
              {(Object.keys(STEP_TYPES) as StepType[]).map((t) => <option key={t} value={t}>{STEP_TYPES[t][0]}</option>)}
            </select>
          )}
        </Field>
        {s.type === "wait" && (
          <Field id={`${id}-minutes`} label="Minutes" error={e("minutes")} hint={`${ESCALATION.minWaitMinutes} to ${ESCALATION.maxWaitMinutes}, before the next step`}>
            {(a) => <input {...a} type="number" min={ESCALATION.minWaitMinutes} max={ESCALATION.maxWaitMinutes} step="any" inputMode="decimal"
              value={s.minutes} onInput={(ev) => set("minutes", ev.currentTarget.value)} />}
          </Field>
        )}
        {s.type === "repeat" && (
          <Field id={`${id}-times`} label="Times" error={e("times")} hint={`Back to the first step, at most 1 to ${ESCALATION.maxRepeats} times; only last, after a wait`}>
            {(a) => <input {...a} type="number" min={1} max={ESCALATION.maxRepeats} step={1} inputMode="numeric"
              value={s.times} onInput={(ev) => set("times", ev.currentTarget.value)} />}
          </Field>
        )}
        {s.type === "notify_webhook" && (
          <Field id={`${id}-webhook`} label="Webhook subscription" error={e("webhook_id")} hint="It receives operator.escalated">
            {(a) => (hooks
              ? (
                <select {...a} value={s.webhook_id} onChange={(ev) => set("webhook_id", ev.currentTarget.value)}>
                  <option value="">Choose a subscription</option>
                  {s.webhook_id && !hooks.some((h) => h.id === s.webhook_id) && <option value={s.webhook_id}>{s.webhook_id}</option>}
                  {hooks.map((h) => <option key={h.id} value={h.id}>{webhookLabel(h)}</option>)}
                </select>
              )
              : <input {...a} type="text" autoComplete="off" placeholder="wh_…" value={s.webhook_id} onInput={(ev) => set("webhook_id", ev.currentTarget.value)} />)}
          </Field>
        )}
      </div>
      {s.type === "notify_on_call" && (
        <div class="inline-form">
          <Field id={`${id}-schedule`} label="On-call schedule id" error={e("schedule_id")} hint="sch_…, from the On-call page">
            {(a) => <input {...a} type="text" autoComplete="off" placeholder="sch_…" value={s.schedule_id} onInput={(ev) => set("schedule_id", ev.currentTarget.value)} />}
          </Field>
          <Field id={`${id}-message`} label="Message (optional)" error={e("message")} hint="Default: the item is still open">
            {(a) => <input {...a} type="text" maxLength={300} value={s.message} onInput={(ev) => set("message", ev.currentTarget.value)} />}
          </Field>
        </div>
      )}
      {s.type === "notify" && (
        <>
          <MentionsEditor step={s} errs={errs} onChange={(m) => set("mentions", m)} />
          <Field id={`${id}-message`} label="Message (optional)" error={e("message")} hint="Default: the item is still open">
            {(a) => <input {...a} type="text" maxLength={300} value={s.message} onInput={(ev) => set("message", ev.currentTarget.value)} />}
          </Field>
        </>
      )}
      <Reorder what={`step ${n}`} n={n} count={count} onMove={onMove} onRemove={onRemove} remove="Remove" />
    </fieldset>
  );
}

function StepsEditor({ legend, error, steps, onChange, errs, hooks }: StepsProps & { legend: string; error?: string }) {
  const add = (t: StepType) => {
    const step = newStep(t);
    onChange([...steps, step]);
    setTimeout(() => document.getElementById(`st-${step.key}-type`)?.focus(), 0);
  };
  return (
    <fieldset class="steps">
      <legend>{legend}</legend>
      {error && <p class="field-error">{error}</p>}
      {steps.length === 0
        ? <p class="muted small">No steps.</p>
        : (
          <ol class="plain">
            {steps.map((s, i) => (
              <li key={s.key}>
                <StepEditor step={s} n={i + 1} count={steps.length} errs={errs} hooks={hooks}
                  onChange={(x) => onChange(steps.map((y) => (y.key === s.key ? x : y)))}
                  onMove={(by) => onChange(move(steps, i, by))} onRemove={() => onChange(steps.filter((y) => y.key !== s.key))} />
              </li>
            ))}
          </ol>
        )}
      {steps.length < ESCALATION.maxSteps && (
        <div class="row-actions">
          {(Object.keys(STEP_TYPES) as StepType[]).map((t) => (
            <button key={t} type="button" class="btn btn-small" onClick={() => add(t)}>{STEP_TYPES[t][1]}</button>
          ))}
        </div>
      )}
    </fieldset>
  );
}

// ---- A rule --------------------------------------------------------------------------------------------------------

function ChannelField({ id, provider, value, onChange, error, channels }: {
  id: string; provider: string; value: string; onChange: (v: string) => void; error?: string; channels: ChannelCache;
}) {
  useEffect(() => channels.want(provider), [provider]);
  const c = channels.byProvider[provider];
  if (c?.state === "ok" && c.data.length) {
    return (
      <Field id={id} label="Channel" error={error}>
        {(a) => (
          <select {...a} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
            <option value="">Choose a channel</option>
            {value && !c.data.some((x) => x.id === value) && <option value={value}>{value} (not in the list)</option>}
            {c.data.map((x) => <option key={x.id} value={x.id}>#{x.name}{x.is_private ? " (private)" : ""}{x.is_member ? "" : " (bot not a member)"}</option>)}
          </select>
        )}
      </Field>
    );
  }
  const hint = c?.state === "loading" ? "Loading the channel list…"
    : c?.state === "failed" ? `The channel list could not be loaded (${c.error.message}). Type ${channels.hint(provider)}.`
    : `Type ${channels.hint(provider)}.`;
  return (
    <Field id={id} label="Channel" error={error} hint={hint}>
      {(a) => <input {...a} type="text" autoComplete="off" maxLength={200} value={value} onInput={(e) => onChange(e.currentTarget.value)} />}
    </Field>
  );
}

function RuleEditor({ rule: r, n, onChange, errs, channels, sources, hooks }: {
  rule: RuleDraft; n: number; onChange: (r: RuleDraft) => void; errs: Errs; channels: ChannelCache; sources: string[]; hooks: Webhook[] | null;
}) {
  const id = `rt-${r.key}`;
  const e = (f: string) => errs[`r${r.key}.${f}`];
  const set = <K extends keyof RuleDraft>(k: K, v: RuleDraft[K]) => onChange({ ...r, [k]: v });
  const known = channels.providers.map((p) => p.id);
  const providers = known.includes(r.provider) ? known : [...known, r.provider];
  const eventsError = e("match.event_types");
  return (
    <div class="rule-editor" role="group" aria-label={`Edit rule ${n}`}>
      <div class="form-grid">
        <Field id={`${id}-name`} label="Name" error={e("name")} class="span-2">
          {(a) => <input {...a} type="text" required maxLength={100} autoComplete="off" placeholder="Finance desk" value={r.name} onInput={(ev) => set("name", ev.currentTarget.value)} />}
        </Field>
        <Field id={`${id}-categories`} label="Categories" error={e("match.categories")} hint="Comma-separated prefixes: tech matches tech/ai; empty: any">
          {(a) => <input {...a} type="text" autoComplete="off" placeholder="finance, tech/ai" value={r.categories} onInput={(ev) => set("categories", ev.currentTarget.value)} />}
        </Field>
        <Field id={`${id}-severity`} label="Minimum severity" error={e("match.min_severity")}>
          {(a) => (
            <select {...a} value={r.min_severity} onChange={(ev) => set("min_severity", ev.currentTarget.value)}>
              <option value="">Any severity</option>
              {SEVERITIES.map((s) => <option key={s} value={s}>{s} and up</option>)}
            </select>
          )}
        </Field>
        <Field id={`${id}-sources`} label="Sources" error={e("match.sources")} class="span-2"
          hint={<>Comma-separated: {sources.join(", ")}, or an ingestion source of yours; empty: any</>}>
          {(a) => <input {...a} type="text" autoComplete="off" value={r.sources} onInput={(ev) => set("sources", ev.currentTarget.value)} />}
        </Field>
        <fieldset class="span-2" aria-describedby={eventsError ? `${id}-events-error` : undefined}>
          <legend>Event types (none ticked: any)</legend>
          <div class="checks">
            {EVENT_TYPES.map((t) => (
              <label key={t} class="check">
                <input type="checkbox" checked={r.event_types.includes(t)}
                  onChange={(ev) => set("event_types", EVENT_TYPES.filter((x) => (x === t ? ev.currentTarget.checked : r.event_types.includes(x))))} />
                <code>{t}</code>
              </label>
            ))}
          </div>
          {eventsError && <p class="field-error" id={`${id}-events-error`}>{eventsError}</p>}
        </fieldset>
        <Field id={`${id}-provider`} label="Chat provider" error={e("provider")}>
          {(a) => (
            <select {...a} value={r.provider} onChange={(ev) => onChange({ ...r, provider: ev.currentTarget.value, channel_id: "" })}>
              {providers.map((p) => <option key={p} value={p}>{channels.label(p)}</option>)}
            </select>
          )}
        </Field>
        <ChannelField id={`${id}-channel`} provider={r.provider} value={r.channel_id} error={e("channel_id")} channels={channels}
          onChange={(v) => set("channel_id", v)} />
      </div>
      <StepsEditor legend="Escalation while nobody acknowledges" error={e("escalation")} steps={r.escalation} errs={errs} hooks={hooks}
        onChange={(s) => set("escalation", s)} />
    </div>
  );
}

function RuleCard({ rule: r, n, count, open, invalid, onToggle, onMove, onRemove, children, channels, hooks }: {
  rule: RuleDraft; n: number; count: number; open: boolean; invalid: boolean; onToggle: () => void; onMove: (by: number) => void;
  onRemove: () => void; children: ComponentChildren; channels: ChannelCache; hooks: Webhook[];
}) {
  const id = `rt-${r.key}`;
  const title = `${n}. ${r.name.trim() || "Unnamed rule"}`;
  return (
    <li class="item card" aria-labelledby={`${id}-title`}>
      <div class="item-head">
        <h3 id={`${id}-title`}>{title}</h3>
        {invalid && <span class="badge badge-bad">Needs a change</span>}
      </div>
      <dl class="facts">
        <dt>Matches</dt><dd>{matchText(r)}</dd>
        <dt>Posts to</dt><dd>{channels.label(r.provider)}, {r.channel_id ? <code>{channels.name(r.provider, r.channel_id)}</code> : "no channel chosen"}</dd>
        <dt>Escalation</dt><dd>{stepsText(r.escalation, hooks)}</dd>
      </dl>
      <Reorder what={`rule ${n}`} n={n} count={count} onMove={onMove} onRemove={onRemove} remove="Delete">
        <button type="button" class="btn btn-small" aria-expanded={open} aria-controls={`${id}-edit`} onClick={onToggle}>
          {open ? "Close" : "Edit"}<span class="visually-hidden"> rule {n}</span>
        </button>
      </Reorder>
      <div id={`${id}-edit`} hidden={!open}>{open && children}</div>
    </li>
  );
}

// ---- The page -------------------------------------------------------------------------------------------------------

export function RoutingPage() {
  useTitle("Routing");
  const loaded = useLoad((signal) => get<OperatorRoutes>(ROUTES, undefined, signal), []);
  const webhooks = useLoad((signal) => get<WebhookList>("/api/integrations/webhooks", { limit: 200 }, signal), []);
  const hooks = webhooks.data?.data ?? (webhooks.error ? null : []);
  // Without a provider list, a rule's provider shows as its id and its channel is typed.
  const chat = useLoad((signal) => get<ChatProviderList>("/api/integrations/chat/providers", undefined, signal), []);
  const social = useLoad((signal) => get<SocialProviderList>("/api/integrations/social/providers", undefined, signal), []);
  const channels = useChannels(chat.data?.data ?? []);
  const sources = [...(social.data?.data.map((p) => p.id) ?? []), ...OPERATOR_ITEM_SOURCES];
  const [rules, setRules] = useState<RuleDraft[]>([]);
  const [def, setDef] = useState<StepDraft[]>([]);
  const [saved, setSaved] = useState("");
  const [open, setOpen] = useState<number[]>([]);
  const [errs, setErrs] = useState<Errs>({});
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const data = loaded.data;
  useEffect(() => {
    if (!data) return;
    const r = data.routes.map(ruleDraft);
    const d = data.default.escalation.map(stepDraft);
    setRules(r);
    setDef(d);
    setSaved(JSON.stringify(toBody(r, d)));
    setOpen([]);
    setErrs({});
  }, [data]);

  const dirty = !!data && JSON.stringify(toBody(rules, def)) !== saved;
  const setRule = (r: RuleDraft) => setRules((rs) => rs.map((x) => (x.key === r.key ? r : x)));
  const toggle = (key: number) => setOpen((o) => (o.includes(key) ? o.filter((k) => k !== key) : [...o, key]));
  const add = () => {
    const r = newRule(data?.default.provider ?? channels.providers[0]?.id ?? "");
    setRules((rs) => [...rs, r]);
    setOpen((o) => [...o, r.key]);
    setNotice(null);
    setTimeout(() => document.getElementById(`rt-${r.key}-name`)?.focus(), 0);
  };
  const remove = (r: RuleDraft, n: number) => {
    setRules((rs) => rs.filter((x) => x.key !== r.key));
    setNotice(`Rule ${n}${r.name.trim() ? ` (${r.name.trim()})` : ""} removed: save to apply.`);
  };

  const save = async (e: Event) => {
    e.preventDefault();
    const sentRules = rules;
    const sentDef = def;
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      const r = await api<OperatorRoutes>(ROUTES, { method: "PUT", body: toBody(sentRules, sentDef) });
      loaded.setData(r);
      setNotice(`Saved: ${plural(r.routes.length, "rule")}, checked in order; items no rule matches take the default route.`);
    } catch (err) {
      const x = asApiError(err);
      const k = keyed(x.fields, sentRules, sentDef);
      setError(x);
      setErrs(k.errs);
      setOpen((o) => [...new Set([...o, ...k.rules])]);
    } finally {
      setBusy(false);
    }
  };
  const discard = () => { if (data) loaded.setData({ ...data }); setError(null); setNotice(null); };

  const invalid = (r: RuleDraft) => Object.keys(errs).some((k) => k.startsWith(`r${r.key}.`) || r.escalation.some((s) => k.startsWith(`s${s.key}.`)));

  return (
    <>
      <PageHeader title="Routing">
        Where operator items are posted and who is reminded while nobody acknowledges them. Rules are checked in order and
        the first that matches an item routes it; items no rule matches take the default route.
      </PageHeader>
      <ErrorBanner error={loaded.error} />
      <ErrorBanner error={chat.error} />
      {/* The provider list first: a channel field asks its provider's channel route once, when it appears. */}
      {(loaded.loading && !data) || chat.loading ? <Loading /> : data && (
        <form onSubmit={save} aria-label="Routing rules and escalation" noValidate>
          <section aria-labelledby="rules-title">
            <h2 id="rules-title">Rules</h2>
            {rules.length === 0
              ? <EmptyState title="No rules.">Every item takes the default route. Add a rule to send some items elsewhere.</EmptyState>
              : (
                <ol class="items">
                  {rules.map((r, i) => (
                    <RuleCard key={r.key} rule={r} n={i + 1} count={rules.length} open={open.includes(r.key)} invalid={invalid(r)}
                      onToggle={() => toggle(r.key)} onMove={(by) => setRules((rs) => move(rs, i, by))} onRemove={() => remove(r, i + 1)}
                      channels={channels} hooks={hooks ?? []}>
                      <RuleEditor rule={r} n={i + 1} onChange={setRule} errs={errs} channels={channels} sources={sources} hooks={hooks} />
                    </RuleCard>
                  ))}
                </ol>
              )}
            {rules.length < ESCALATION.maxRoutes && <div class="toolbar"><button type="button" class="btn" onClick={add}>Add rule</button></div>}
          </section>
          <section class="card" aria-labelledby="default-title">
            <h2 id="default-title">Default route</h2>
            <p class="muted">
              {data.default.provider
                ? <>Items no rule matches go to {channels.label(data.default.provider)},{" "}
                  {data.default.channel_id ? <code>{channels.name(data.default.provider, data.default.channel_id)}</code> : "its saved channel (none yet)"}, when the chat settings let them open.</>
                : <>No chat connection yet: connect {channels.providers.map((p) => p.display_name).join(" or ") || "a chat provider"} on <a href="#/connections">Connections</a> and save its channel.</>}
              {" "}Without steps, critical items get the settings' reminder.
            </p>
            <StepsEditor legend="Escalation of the default route" error={errs.default_escalation} steps={def} onChange={setDef} errs={errs} hooks={hooks} />
          </section>
          <div class="card">
            <ErrorBanner error={error} onDismiss={() => setError(null)} />
            <Notice message={notice} />
            <div class="actions">
              <button type="submit" class="btn btn-primary" disabled={busy} aria-busy={busy}>Save routes</button>
              <button type="button" class="btn" disabled={busy || !dirty} onClick={discard}>Discard changes</button>
              <span class="muted small">{dirty ? "Unsaved changes." : "No unsaved changes."}</span>
            </div>
          </div>
        </form>
      )}
    </>
  );
}
