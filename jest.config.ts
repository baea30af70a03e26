import type { Config } from "jest";

// ESM throughout (got and Prisma's generated client are ESM): jest runs with --experimental-vm-modules
// (see the "jest" script) and @swc/jest strips types without changing the module format.
const config: Config = {
  testEnvironment: "node",
  extensionsToTreatAsEsm: [".ts"],
  transform: {
    "^.+\\.ts$": ["@swc/jest", { jsc: { target: "es2022", parser: { syntax: "typescript" } }, module: { type: "es6" } }],
  },
  testMatch: ["<rootDir>/tests/**/*.test.ts"],
  // tests/cluster needs a Redis Cluster: it runs in the cluster suite (scripts/test.mjs sets TEST_REDIS_CLUSTER).
  testPathIgnorePatterns: process.env.TEST_REDIS_CLUSTER === "1" ? ["/node_modules/"] : ["/node_modules/", "<rootDir>/tests/cluster/"],
  setupFiles: ["<rootDir>/tests/helpers/setup-env.ts"],
  // An earlier file's work still due in this worker's database is settled before each file starts its own stack.
  setupFilesAfterEnv: ["<rootDir>/tests/helpers/file-isolation.ts"],
  testTimeout: 30_000,
  // Each jest worker has its own database (scripts/reset-test-env.ts); files isolate Redis with their own queue prefix.
  maxWorkers: 2,
  // ESM test files under --experimental-vm-modules each load their modules anew, and a worker's heap grows over the
  // ~100 files it runs: one crossing V8's limit crashed mid-suite. A worker above this between files is replaced.
  workerIdleMemoryLimit: "2GB",
};

export default config;
