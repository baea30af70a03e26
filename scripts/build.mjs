// `npm run build`: bundles the gateway and the worker to plain JavaScript in dist/ (what `npm start`, the Docker
// image and the benchmarks run). Our own workspace sources (@trendgate/*, including the generated Prisma client) go
// into the bundle; every npm package stays an import of node_modules, so native addons, wasm files and packages
// that read their own files keep working. Why: under `node --import tsx` each process also carries tsx's loader
// thread, its esbuild service and the transpiled sources (about 45 MB of RSS), part of what put a big report
// export over its 200 MB memory budget (docs/development.md › Memory). Tests and scripts still run the .ts sources under tsx.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build, stop } from "esbuild";

const root = path.resolve(import.meta.dirname, "..");
// Output name (under dist/, .mjs) -> source. The gateway's backtest threads load their own module, beside the gateway's.
const ENTRIES = {
  "gateway/main": "apps/gateway/src/main.ts",
  "gateway/backtest-thread": "apps/gateway/src/services/backtest/thread.ts",
  "worker/main": "apps/worker/src/main.ts",
};

// Bare specifiers other than our workspaces resolve at run time from node_modules.
const externalPackages = {
  name: "external-packages",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith("@trendgate/") ? undefined : { path: args.path, external: true }));
  },
};

// Prisma's generated client imports its query compiler (WebAssembly) as a 4.6 MB base64 string module, which V8
// keeps twice for the life of the process (the module's source and the string): about 9 MB of heap. The bundle
// compiles it from the .wasm bytes instead, written to dist/ at build time. Every output file sits one folder below
// dist/ (gateway/, worker/, chunks/), hence "../". Should Prisma change that generated code, the bundle keeps
// Prisma's own loader and the build says so.
const WASM_FILE = "prisma-query-compiler.wasm";
const WASM_LOADER = /getQueryCompilerWasmModule: async \(\) => \{\s*const \{ wasm \} = await import\("([^"]+)"\)\s*return await decodeBase64AsWasm\(wasm\)\s*\}/;
const prismaWasmFromFile = (outdir, warn) => ({
  name: "prisma-wasm-from-file",
  setup(b) {
    b.onLoad({ filter: /[\\/]packages[\\/]db[\\/]src[\\/]generated[\\/]internal[\\/]class\.ts$/ }, async (args) => {
      const source = fs.readFileSync(args.path, "utf8");
      const m = WASM_LOADER.exec(source);
      if (!m) { warn(`${path.relative(root, args.path)}: Prisma's query compiler loader has changed; bundled as generated (about 9 MB more heap per process)`); return undefined; }
      const { wasm } = await import(m[1]);
      fs.writeFileSync(path.join(outdir, WASM_FILE), Buffer.from(wasm, "base64"));
      return {
        loader: "ts",
        contents: source.replace(WASM_LOADER, `getQueryCompilerWasmModule: async () => new WebAssembly.Module(await (await import("node:fs/promises")).readFile(new URL("../${WASM_FILE}", import.meta.url)))`),
      };
    });
  },
});

/** Bundles into `outdir` (default dist/; tests build elsewhere in the checkout, beside its node_modules). */
export async function buildApps({ quiet = false, outdir = path.join(root, "dist") } = {}) {
  fs.rmSync(outdir, { recursive: true, force: true });
  fs.mkdirSync(outdir, { recursive: true });
  const warn = (msg) => process.stderr.write(`[trendgate] build: ${msg}\n`);
  await build({
    absWorkingDir: root,
    entryPoints: ENTRIES,
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20.19",
    splitting: true, // code both apps share (contracts, db, connectors) is one chunk, not two copies
    chunkNames: "chunks/[name]-[hash]",
    sourcemap: "linked",
    sourcesContent: false,
    legalComments: "none",
    logLevel: quiet ? "warning" : "info",
    plugins: [externalPackages, prismaWasmFromFile(outdir, warn)],
  }).finally(stop); // esbuild's service process (about 60 MB) would otherwise live as long as `npm start` does
}

// `node scripts/build.mjs [outdir]`
if (import.meta.url === pathToFileURL(process.argv[1]).href) await buildApps({ ...(process.argv[2] ? { outdir: path.resolve(process.argv[2]) } : {}) });
