#!/usr/bin/env node
// Derives the vendor API descriptions the test stand-ins check traffic against (tests/peers/slack-spec.ts,
// tests/peers/pinterest-ads-server.ts) from the vendors' published descriptions: only the operations the stand-ins
// serve, with every definition, schema and parameter they reach ($ref and discriminator mappings, transitively), so
// the repository carries a small extract it can read offline instead of the whole vendor file.
//
// Run by hand when a stand-in serves a new method or the vendor publishes a new version:
//   node scripts/extract-vendor-specs.mjs <dir>
// where <dir> holds the published files as slack-web-api.openapi2.json + slack-LICENSE (slackapi/slack-api-specs:
// web-api/slack_web_openapi_v2.json, LICENSE) and pinterest-v5.openapi.json + pinterest-LICENSE
// (pinterest/api-description: v5/openapi.json, LICENSE). Writes tests/peers/vendor-specs/.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const OUT = fileURLToPath(new URL("../tests/peers/vendor-specs/", import.meta.url));

const VENDORS = [
  {
    source: "slack-web-api.openapi2.json",
    license: "slack-LICENSE",
    out: "slack-web-api.subset.json",
    origin: "slackapi/slack-api-specs web-api/slack_web_openapi_v2.json",
    // Web API methods tests/peers/slack-server.ts answers (Swagger 2.0 paths are `/<method>`).
    operations: ["oauth.v2.access", "auth.revoke", "conversations.list", "conversations.info", "conversations.join", "chat.postMessage", "chat.update"]
      .map((m) => [`/${m}`, "*"]),
    // slack-spec.ts types chat.update's `message.blocks` as this definition (the description says `object`).
    extraRefs: ["#/definitions/blocks"],
    keep: ["swagger", "info", "host", "basePath", "schemes", "externalDocs"],
  },
  {
    source: "pinterest-v5.openapi.json",
    license: "pinterest-LICENSE",
    out: "pinterest-v5.subset.json",
    origin: "pinterest/api-description v5/openapi.json",
    // Operations tests/peers/pinterest-ads-server.ts answers.
    operations: [
      ["/oauth/token", "post"],
      ["/resources/targeting/{targeting_type}", "get"],
      ["/ad_accounts/{ad_account_id}", "get"],
      ["/ad_accounts/{ad_account_id}/ads", "get"],
      ["/ad_accounts/{ad_account_id}/campaigns", "get"],
      ["/ad_accounts/{ad_account_id}/ad_groups", "get"],
      ["/ad_accounts/{ad_account_id}/ad_groups", "patch"],
      ["/ad_accounts/{ad_account_id}/ad_groups/audience_sizing", "post"],
      ["/ad_accounts/{ad_account_id}/keywords", "get"],
      ["/ad_accounts/{ad_account_id}/keywords", "post"],
      ["/ad_accounts/{ad_account_id}/keywords", "patch"],
      ["/ad_accounts/{ad_account_id}/campaigns/analytics", "get"],
      ["/ad_accounts/{ad_account_id}/ad_groups/analytics", "get"],
      ["/ad_accounts/{ad_account_id}/ads/analytics", "get"],
      ["/ad_accounts/{ad_account_id}/reports", "get"],
      ["/ad_accounts/{ad_account_id}/reports", "post"],
    ],
    extraRefs: [],
    keep: ["openapi", "info", "servers"],
  },
];

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

/** Internal references anywhere below `node`: `$ref` values and discriminator mappings (plain "#/..." strings). */
function refsIn(node, out = []) {
  if (Array.isArray(node)) for (const x of node) refsIn(x, out);
  else if (node && typeof node === "object") for (const v of Object.values(node)) refsIn(v, out);
  else if (typeof node === "string" && node.startsWith("#/")) out.push(node);
  return out;
}

const pointer = (ref) => ref.slice(2).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));

function extract(doc, vendor) {
  const paths = {};
  for (const [p, method] of vendor.operations) {
    const item = doc.paths[p];
    if (!item) throw new Error(`${vendor.source}: no path ${p}`);
    const methods = method === "*" ? Object.keys(item).filter((k) => HTTP_METHODS.has(k)) : [method];
    paths[p] ??= Object.fromEntries(Object.entries(item).filter(([k]) => !HTTP_METHODS.has(k))); // path-level parameters
    for (const m of methods) {
      if (!item[m]) throw new Error(`${vendor.source}: no ${m.toUpperCase()} ${p}`);
      paths[p][m] = item[m];
    }
  }
  // The closure of every reference the kept operations reach, by JSON pointer (e.g. components/schemas/Foo).
  const seen = new Set();
  const queue = [...refsIn(paths), ...vendor.extraRefs];
  while (queue.length) {
    const ref = queue.pop();
    if (seen.has(ref)) continue;
    const target = pointer(ref).reduce((o, k) => o?.[k], doc);
    if (target === undefined) throw new Error(`${vendor.source}: ${ref} does not resolve`);
    seen.add(ref);
    queue.push(...refsIn(target));
  }
  const out = { "x-derived-from": `${vendor.origin} (version ${doc.info.version}), reduced to the operations the test stand-ins serve by scripts/extract-vendor-specs.mjs` };
  for (const k of vendor.keep) if (doc[k] !== undefined) out[k] = doc[k];
  out.paths = paths;
  // Sections of referenced things (definitions, components/schemas, ...) keep the vendor's order.
  const sections = new Map();
  for (const ref of seen) {
    const parts = pointer(ref);
    const section = parts.slice(0, -1).join("/");
    if (!sections.has(section)) sections.set(section, new Set());
    sections.get(section).add(parts.at(-1));
  }
  for (const section of [...sections.keys()].sort()) {
    const names = sections.get(section);
    const parts = section.split("/");
    const from = parts.reduce((o, k) => o[k], doc);
    let into = out;
    for (const k of parts) into = into[k] ??= {};
    for (const [name, v] of Object.entries(from)) if (names.has(name)) into[name] = v;
  }
  // Security schemes are named by operations, not referenced.
  const schemes = new Set(Object.values(paths).flatMap((item) => Object.values(item)).flatMap((op) => (op?.security ?? []).flatMap((s) => Object.keys(s))));
  const defs = doc.securityDefinitions ?? doc.components?.securitySchemes;
  if (defs) {
    const picked = Object.fromEntries(Object.entries(defs).filter(([k]) => schemes.has(k)));
    if (doc.securityDefinitions) out.securityDefinitions = picked;
    else (out.components ??= {}).securitySchemes = picked;
  }
  if (doc.security) out.security = doc.security;
  return { out, refs: seen.size };
}

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node scripts/extract-vendor-specs.mjs <dir with the vendors' published descriptions and licenses>");
  process.exit(2);
}
fs.mkdirSync(OUT, { recursive: true });
for (const vendor of VENDORS) {
  const doc = JSON.parse(fs.readFileSync(path.join(dir, vendor.source), "utf8"));
  const { out, refs } = extract(doc, vendor);
  const text = `${JSON.stringify(out, null, 2)}\n`;
  fs.writeFileSync(path.join(OUT, vendor.out), text);
  fs.writeFileSync(path.join(OUT, vendor.license), fs.readFileSync(path.join(dir, vendor.license))); // not copyFile: keeps no read-only mode
  console.log(`${vendor.out}: ${Object.keys(out.paths).length} paths, ${refs} referenced objects, ${(text.length / 1024).toFixed(0)} KiB (from ${vendor.source} ${doc.info.version})`);
}
