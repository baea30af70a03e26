import { loadConfig, oauthRedirectUrl } from "@trendgate/config";

// Outward links (briefing pages, OAuth redirect_uri, executor report URLs) are built on PUBLIC_BASE_URL.
const required = { ADMIN_TOKEN: "a".repeat(24), ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64") };

test("unset, PUBLIC_BASE_URL follows PORT, and so does the OAuth redirect URL", () => {
  const c = loadConfig({ ...required, PORT: "4123" });
  expect(c.PUBLIC_BASE_URL).toBe("http://localhost:4123");
  expect(oauthRedirectUrl(c)).toBe("http://localhost:4123/api/integrations/oauth/callback");
});

test("with neither set, links point at the default port 3000", () => {
  expect(loadConfig(required).PUBLIC_BASE_URL).toBe("http://localhost:3000");
});

test("a PUBLIC_BASE_URL that is set wins over PORT (a proxy in front answers elsewhere)", () => {
  const c = loadConfig({ ...required, PORT: "4123", PUBLIC_BASE_URL: "https://trendgate.example.com" });
  expect(c.PUBLIC_BASE_URL).toBe("https://trendgate.example.com");
  expect(oauthRedirectUrl(c)).toBe("https://trendgate.example.com/api/integrations/oauth/callback");
});

test("an empty PUBLIC_BASE_URL counts as unset; a bad one is named in the error", () => {
  expect(loadConfig({ ...required, PORT: "8080", PUBLIC_BASE_URL: "" }).PUBLIC_BASE_URL).toBe("http://localhost:8080");
  expect(() => loadConfig({ ...required, PUBLIC_BASE_URL: "ftp://x" })).toThrow(/PUBLIC_BASE_URL must be a http:\/\/ or https:\/\/ URL/);
});
