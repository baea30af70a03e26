import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/client.ts";

export type Db = PrismaClient;

/** One Prisma client per process, on the pg driver adapter (Prisma 7 has no built-in engine connection). */
export function createDb(url: string, opts: { poolSize?: number } = {}): Db {
  const adapter = new PrismaPg({
    connectionString: url,
    max: opts.poolSize ?? 10,
    connectionTimeoutMillis: 2000, // a down database fails the request (503) instead of hanging it
  });
  return new PrismaClient({ adapter });
}
