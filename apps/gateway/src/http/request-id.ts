import crypto from "node:crypto";
import type { NextFunction, Request, Response } from "express";

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A caller's X-Request-Id when it is safe to log (so traces join up); otherwise a new one. */
export const requestIdFrom = (incoming: unknown) =>
  typeof incoming === "string" && SAFE_ID.test(incoming) ? incoming : `req_${crypto.randomUUID().replace(/-/g, "")}`;

export function requestId(req: Request, res: Response, next: NextFunction) {
  req.id = requestIdFrom(req.get("x-request-id"));
  res.setHeader("X-Request-Id", req.id);
  next();
}
