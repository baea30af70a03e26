import type { RequestHandler } from "express";
import { ApiError } from "../http/api-error.ts";
import { consoleAssets } from "./assets.ts";

/** GET /console/assets/:name: the bundle's files by their hashed names, cacheable for a year (a new build has new names). */
export const consoleAssetHandler: RequestHandler = async (req, res) => {
  const asset = (await consoleAssets()).byName.get(String(req.params.name));
  if (!asset) throw new ApiError("route_not_found", `No console asset ${req.params.name}; reload the console page`);
  res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
  res.setHeader("Vary", "Accept-Encoding");
  const encoding = req.acceptsEncodings("br", "gzip");
  if (encoding === "br" || encoding === "gzip") res.setHeader("Content-Encoding", encoding);
  res.type(asset.type).send(encoding === "br" ? asset.br : encoding === "gzip" ? asset.gzip : asset.body);
};
