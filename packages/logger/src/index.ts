import { pino, type Logger } from "pino";

export type { Logger };

// Paths never written to logs, wherever they appear in a logged object.
export const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  "req.headers['x-n8n-api-key']",
  "headers.authorization",
  "*.api_key",
  "*.apiKey",
  "*.secret",
  "*.token",
  "*.access_token",
  "*.refresh_token",
  "*.password",
  "*.key",
];

export function createLogger(opts: { level?: string; name?: string } = {}): Logger {
  return pino({
    name: opts.name,
    level: opts.level ?? "info",
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    base: { service: opts.name },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
