import type { Request, Response } from "express";
import type { z } from "zod";
import type { GatewayDeps } from "../app.ts";

export type AuthKind = "apiKey" | "admin" | "public";

export interface AuthContext {
  accountId: string;
  keyId: string;
  plan: string;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type Infer<T> = T extends z.ZodType ? z.output<T> : undefined;

export interface HandlerContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  auth: AuthContext; // present on apiKey routes (the only ones that read it)
  deps: GatewayDeps;
  req: Request;
  res: Response;
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
  /** Accepts an Idempotency-Key header (POSTs that create or enqueue). */
  idempotent?: boolean;
  body?: B;
  query?: Q;
  params?: P;
  responses: Record<number, { description: string; schema?: z.ZodType; headers?: Record<string, string> }>;
  /** Raw handlers (docs page, metrics) send their own response and are not JSON endpoints. */
  raw?: boolean;
  handler(ctx: HandlerContext<Infer<B>, Infer<Q>, Infer<P>>): Promise<Reply | void> | Reply | void;
}

export const defineRoute = <B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined, P extends z.ZodType | undefined = undefined>(
  r: RouteDef<B, Q, P>,
): RouteDef => r as RouteDef;

export const expressPath = (p: string) => p.replace(/\{(\w+)\}/g, ":$1");
