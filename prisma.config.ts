import path from "node:path";
import { defineConfig } from "prisma/config";

// Prisma's engine download host may be unreachable: use the Wasm schema engine through a JSON-RPC shim
// (tools/schema-engine-wasm.mjs) unless a real schema-engine binary is configured explicitly.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.join(import.meta.dirname, "tools/schema-engine-wasm.mjs");

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/trendgate" },
});
