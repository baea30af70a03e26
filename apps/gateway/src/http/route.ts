import type { Request, Response } from "express";
import type { z } from "zod";
import type { Tx } from "@trendgate/db";
import type { GatewayDeps } from "../deps.ts";
import type { AuthContext } from "./auth-context.ts";
import type { Reply } from "./reply.ts";

export type { AuthContext, Reply };

export type AuthKind = "apiKey" | "admin" | "public";

type Infer<T> = T extends z.ZodType ? z.output<T> : undefined;

export interface HandlerContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  auth: AuthContext; // present on apiKey routes (the only ones that read it)
  deps: GatewayDeps;
  req: Request;
  res: Response;
  /**
   * Runs `work` in one database transaction and returns its reply. With an Idempotency-Key, the key's answer is
   * recorded in the same transaction, so a crash after the commit replays this reply instead of running twice.
   * Call it at most once per request, for the writes that create or change things; queue jobs after it returns
   * (the outbox sweeper re-queues what a crash left unqueued).
   */
  atomically(work: (tx: Tx) => Promise<Reply>): Promise<Reply>;
  /** The request's Idempotency-Key, when it sent one (e.g. to derive a job id, so a replayed enqueue is a no-op). */
  idempotencyKey?: string;
}

/**
 * One route = one definition. The router mounts it on Express with the right middleware (auth, limits, body
 * parsing, validation, idempotency) and the OpenAPI document is generated from the same object, so the two
 * cannot drift apart.
 */
export interface RouteDef<B extends z.ZodType | undefined = any, Q extends z.ZodType | undefined = any, P extends z.ZodType | undefined = any> {
  method: "get" | "post" | "put" | "patch" | "delete";
  path: string; // OpenAPI style: /api/keys/{id}
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  auth: AuthKind;
  /** Only an API key may call it, not a web console session: what creates or revokes credentials. */
  keyOnly?: boolean;
  /**
   * Accepts an Idempotency-Key header (POSTs that create or enqueue). `"transactional"`: the handler commits its
   * writes through `atomically`, which records the answer in the same transaction (crash-safe replays); `true`: the
   * work is naturally idempotent (e.g. deduplicated signals) and the answer is kept in Redis.
   */
  idempotent?: boolean | "transactional";
  body?: B;
  query?: Q;
  params?: P;
  /** `content`: the body's schema per media type, for answers that are not (only) JSON (an HTML page); else `schema` is JSON. */
  responses: Record<number, { description: string; schema?: z.ZodType; headers?: Record<string, string>; content?: Record<string, z.ZodType> }>;
  /** Raw handlers (docs page, metrics) send their own response and are not JSON endpoints. */
  raw?: boolean;
  /** The body is not parsed: the handler reads the exact bytes from `req.rawBody` (senders that sign them, e.g. chat interactivity). */
  rawBody?: boolean;
  /** Returns the reply, or sends it itself through `res` (a stream) and returns nothing. */
  handler(ctx: HandlerContext<Infer<B>, Infer<Q>, Infer<P>>): Promise<Reply | void> | Reply | void;
}

export const defineRoute = <B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined, P extends z.ZodType | undefined = undefined>(
  r: RouteDef<B, Q, P>,
): RouteDef => r as RouteDef;

export const expressPath = (p: string) => p.replace(/\{(\w+)\}/g, ":$1");

// ---- Replies against their declared schema ------------------------------------------------------------------------
// The OpenAPI document promises each answer's shape; in tests the router holds every reply to it, so a field a
// handler adds without declaring it (or a value its schema does not allow) fails the test that provoked it.

/** Route groups (tags) whose replies must match their schema exactly; REPLY_CHECK=all holds every route to it. */
const STRICT_REPLY_TAGS = new Set(["Ads connectors", "Ads executor", "Ads reporting"]);
export const strictReplies = (route: RouteDef) => process.env.REPLY_CHECK === "all" || STRICT_REPLY_TAGS.has(route.tag);

/**
 * What is wrong with a 2xx JSON reply by the schema its route declares for that status: values the schema refuses,
 * and fields it does not declare (which zod would silently drop), each as `path: problem`. Empty when the reply is
 * right, or has no declared schema or no JSON body.
 */
export function replyProblems(route: RouteDef, reply: Reply): string[] {
  const schema = route.responses[reply.status]?.schema;
  if (!schema || reply.body === undefined || reply.status < 200 || reply.status > 299) return [];
  const sent: unknown = JSON.parse(JSON.stringify(reply.body)); // what the client receives
  const parsed = schema.safeParse(sent);
  if (!parsed.success) return parsed.error.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`);
  return undeclaredFields(sent, parsed.data);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Keys of `sent` that parsing dropped (undeclared), at any depth. */
function undeclaredFields(sent: unknown, parsed: unknown, at = ""): string[] {
  if (Array.isArray(sent) && Array.isArray(parsed)) return sent.flatMap((v, i) => undeclaredFields(v, parsed[i], `${at}${i}.`));
  if (!isPlainObject(sent) || !isPlainObject(parsed)) return [];
  return Object.entries(sent).flatMap(([k, v]) => (k in parsed ? undeclaredFields(v, parsed[k], `${at}${k}.`) : [`${at}${k}: not declared in the response schema`]));
}

/**
 * The reply, checked in tests (NODE_ENV=test): off its declared schema it throws (a 500 naming the fields) for the
 * strict route groups, and is reported through `warn` for the others.
 */
export function checkedReply(route: RouteDef, reply: Reply, warn: (problems: string[]) => void): Reply {
  if (process.env.NODE_ENV !== "test") return reply;
  const problems = replyProblems(route, reply);
  if (!problems.length) return reply;
  if (strictReplies(route)) throw new Error(`${route.operationId} answered ${reply.status} off its declared schema: ${problems.slice(0, 10).join("; ")}`);
  warn(problems);
  return reply;
}
