import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const EXTRACTS = fileURLToPath(new URL("./vendor-specs/", import.meta.url));

/**
 * Where a vendor's API description is read: the extract in tests/peers/vendor-specs/ (the operations the stand-ins
 * serve, made by scripts/extract-vendor-specs.mjs), or, with VENDOR_SPECS_DIR set, the vendor's full published file
 * in that folder (to check the stand-ins against a new vendor version before extracting it).
 */
export function vendorSpecFile(extract: string, published: string): string {
  return process.env.VENDOR_SPECS_DIR ? path.join(process.env.VENDOR_SPECS_DIR, published) : path.join(EXTRACTS, extract);
}

/** The description as JSON, or a clear error naming the file and how to make it. */
export function readVendorSpec(vendor: string, file: URL | string): any {
  if (!fs.existsSync(file)) {
    throw new Error(`${vendor}'s API description is not at ${String(file)}: regenerate the extracts with scripts/extract-vendor-specs.mjs, or unset VENDOR_SPECS_DIR`);
  }
  return JSON.parse(fs.readFileSync(file, "utf8"));
}
