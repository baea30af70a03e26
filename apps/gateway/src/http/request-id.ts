import crypto from "node:crypto";
import type { NextFunction, Request, Response } from "express";

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Honours a caller's X-Request-Id (when it is safe to log) so traces join up; otherwise makes one. */
export function requestId(req: Request, res: Response, next: NextFunction) {
  const incoming = req.get("x-request-id");
  req.id = incoming && SAFE_ID.test(incoming) ? incoming : `req_${crypto.randomUUID().replace(/-/g, "")}`;
  res.setHeader("X-Request-Id", req.id);
  next();
}
