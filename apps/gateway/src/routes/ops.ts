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

/** Where a visitor of the bare address goes next (a browser gets them as a page, an API client as JSON). */
const LANDING_LINKS = [
  { href: "/docs/", title: "API reference", description: "Every route, its fields and errors (Swagger UI)" },
  { href: "/docs/events", title: "Event catalog", description: "Every webhook event type with its schema and an example" },
  { href: "/console/", title: "Web console", description: "Opened with a one-time link: POST /api/console/sessions with an API key" },
  { href: "/status", title: "Status", description: "Whether the service and its dependencies answer" },
  { href: "/openapi.json", title: "OpenAPI document", description: "The API description as JSON (OpenAPI 3.1)" },
] as const;

const escapeHtml = (t: string) => t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const LANDING_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Trendgate</title></head>
<body><main><h1>Trendgate</h1><p>This is the Trendgate API. Start here:</p><ul>
${LANDING_LINKS.map((l) => `<li><a href="${l.href}">${escapeHtml(l.title)}</a>: ${escapeHtml(l.description)}</li>`).join("\n")}
</ul></main></body></html>`;

export const opsRoutes = (openApi: OpenApiOf): RouteDef[] => [
  defineRoute({
    method: "get", path: "/", operationId: "getLandingPage", tag: "Operations", auth: "public", raw: true,
    summary: "Where to go from the bare address: the API reference, the event catalog, the console, the status (HTML, or JSON when asked)",
    responses: { 200: { description: "HTML page, or `{links: [{href, title, description}]}` for Accept: application/json" } },
    handler({ req, res }) {
      if (req.accepts(["html", "json"]) === "json") return void res.json({ links: LANDING_LINKS });
      // No script and no style: nothing on the page needs either.
      res.setHeader("Content-Security-Policy", "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
      res.type("html").send(LANDING_PAGE);
    },
  }),
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
