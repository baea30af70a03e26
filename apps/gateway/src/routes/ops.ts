import swaggerUi from "swagger-ui-express";
import { z } from "zod";
import { defineRoute, type RouteDef } from "../http/route.ts";
import { DOCS_CSP } from "../http/security-headers.ts";
import { buildAsyncApiDocument, type AsyncApiDocument } from "../openapi/asyncapi.ts";
import type { buildOpenApiDocument } from "../openapi/document.ts";
import { eventsPage } from "../openapi/events-page.ts";

/** The document of the routes a gateway serves (built on first use). */
export type OpenApiOf = () => ReturnType<typeof buildOpenApiDocument>;

export const docsAssets = (openApi: OpenApiOf) => swaggerUi.serveFiles(openApi(), { customSiteTitle: "Trendgate API" });

/** The event catalog (built once). */
let catalog: AsyncApiDocument | undefined;
const asyncApi = () => (catalog ??= buildAsyncApiDocument({ version: "0.1.0" }));

export const opsRoutes = (openApi: OpenApiOf): RouteDef[] => [
  defineRoute({
    method: "get", path: "/asyncapi.json", operationId: "getEventCatalog", tag: "Operations", auth: "public",
    summary: "The event catalog: every event type, its channels, JSON Schema and an example (AsyncAPI 3.0)", raw: true,
    responses: { 200: { description: "AsyncAPI 3.0 document", schema: z.record(z.string(), z.unknown()) } },
    handler({ res }) { res.json(asyncApi()); },
  }),
  defineRoute({
    method: "get", path: "/docs/events", operationId: "getEventCatalogPage", tag: "Operations", auth: "public",
    summary: "The event catalog as a readable page", raw: true,
    responses: { 200: { description: "HTML page" } },
    handler({ res }) {
      res.setHeader("Content-Security-Policy", DOCS_CSP);
      res.type("html").send(eventsPage(asyncApi()));
    },
  }),
  defineRoute({
    method: "get", path: "/openapi.json", operationId: "getOpenApiDocument", tag: "Operations", auth: "public",
    summary: "This OpenAPI 3.1 document", raw: true,
    responses: { 200: { description: "OpenAPI 3.1 document", schema: z.record(z.string(), z.unknown()) } },
    handler({ res }) { res.json(openApi()); },
  }),
  defineRoute({
    method: "get", path: "/docs", operationId: "getDocsPage", tag: "Operations", auth: "public",
    summary: "Readable API reference (Swagger UI, served locally)", raw: true,
    responses: { 200: { description: "HTML page" } },
    handler({ req, res }) {
      if (!req.originalUrl.split("?")[0].endsWith("/")) return res.redirect(301, "/docs/"); // assets are relative
      res.setHeader("Content-Security-Policy", DOCS_CSP);
      res.type("html").send(swaggerUi.generateHTML(openApi(), { customSiteTitle: "Trendgate API" }));
    },
  }),
  defineRoute({
    method: "get", path: "/metrics", operationId: "getMetrics", tag: "Operations", auth: "admin",
    summary: "Prometheus metrics (admin token)", raw: true,
    responses: { 200: { description: "Prometheus text exposition format" } },
    async handler({ deps, res }) {
      res.type(deps.metrics.contentType).send(await deps.metrics.metrics());
    },
  }),
];
