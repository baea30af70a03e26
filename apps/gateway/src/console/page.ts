import type { ConsoleAssets } from "./assets.ts";

// The console's one HTML page: a shell that loads the bundled script and stylesheet (no inline script or style, so
// the policy can forbid both), with a message for browsers without JavaScript.

/**
 * Content-Security-Policy of the console page. Scripts, styles and API calls from this origin only (connect-src
 * 'self' covers the WebSocket stream); frame-ancestors: the account's allowed origins, or none.
 */
export function consoleCsp(frameAncestors: readonly string[]): string {
  const ancestors = frameAncestors.length ? frameAncestors.join(" ") : "'none'";
  return `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${ancestors}`;
}

export function consolePage(assets: ConsoleAssets): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Trendgate console</title>
<link rel="stylesheet" href="/console/assets/${assets.style.name}">
<script type="module" src="/console/assets/${assets.script.name}"></script>
</head>
<body>
<div id="app"><noscript><p>The Trendgate console needs JavaScript. Everything it shows is also available from the API: see /docs.</p></noscript></div>
</body>
</html>
`;
}
