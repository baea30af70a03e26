import crypto from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import zlib from "node:zlib";
import { build } from "esbuild";

// The console's browser code (apps/console, a Preact app) bundled once per process, in memory, on the first request
// for it: one script and one stylesheet, minified, named by their content hash so browsers may cache them forever.
// esbuild is already a runtime dependency (tsx runs on it), so the gateway needs no build step of its own for them.

export interface ConsoleAsset {
  name: string;
  type: string;
  body: Buffer;
  /** The body compressed once at build time, for browsers that accept it (every current one accepts both). */
  br: Buffer;
  gzip: Buffer;
}

export interface ConsoleAssets {
  script: ConsoleAsset;
  style: ConsoleAsset;
  byName: Map<string, ConsoleAsset>;
}

/** apps/console, found through its workspace link so the bundled gateway (dist/) finds it too. */
const consoleDir = () => path.dirname(createRequire(import.meta.url).resolve("@trendgate/console/package.json"));

async function bundle(): Promise<ConsoleAssets> {
  const src = path.join(consoleDir(), "src");
  const out = await build({
    entryPoints: [{ in: path.join(src, "main.tsx"), out: "app" }, { in: path.join(src, "styles.css"), out: "app" }],
    bundle: true, minify: true, format: "esm", target: "es2022", jsx: "automatic", jsxImportSource: "preact",
    write: false, outdir: "/console", legalComments: "none", logLevel: "silent",
  });
  const asset = (ext: string, type: string): ConsoleAsset => {
    const file = out.outputFiles.find((f) => f.path.endsWith(ext))!;
    const hash = crypto.createHash("sha256").update(file.contents).digest("base64url").slice(0, 12);
    const body = Buffer.from(file.contents);
    return {
      name: `app.${hash}${ext}`, type, body, gzip: zlib.gzipSync(body, { level: 9 }),
      br: zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
    };
  };
  const script = asset(".js", "text/javascript; charset=utf-8");
  const style = asset(".css", "text/css; charset=utf-8");
  return { script, style, byName: new Map([script, style].map((a) => [a.name, a])) };
}

let built: Promise<ConsoleAssets> | undefined;

/** The bundle, built on first use; a failed build is retried on the next call. */
export function consoleAssets(): Promise<ConsoleAssets> {
  built ??= bundle().catch((err) => { built = undefined; throw err; });
  return built;
}
