import crypto from "node:crypto";
import { generateExecutorSigningKey, loadExecutorSigningKey, signExecutorPlan, verifyExecutorPlan, EXECUTOR_PLAN_TYP } from "@trendgate/ads";

// Executor plans are JWTs signed with Ed25519. A caller verifies them with the published public
// key using any JWT library, or with nothing but its platform's Ed25519 (checked here with node:crypto, not jose);
// tampering, expiry, a wrong audience or an unknown key are refused.

const plan = { plan_id: "pln_1", provider: "google_ads", steps: [{ seq: 1, method: "POST", url: "https://googleads.example/v25/customers/1/adGroupCriteria:mutate", body: { operations: [] } }] };
const opts = { planId: "pln_1", audience: "acc_1", ttlSeconds: 600, issuer: "https://trendgate.test" };

test("a signed plan verifies with the published public key, also without jose", async () => {
  const key = await loadExecutorSigningKey(await generateExecutorSigningKey());
  expect(key.publicJwk).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig", kid: key.kid });
  expect(key.publicJwk).not.toHaveProperty("d"); // the private part is never published
  const token = await signExecutorPlan(key, plan, opts);

  const verified = await verifyExecutorPlan(token, [key.publicJwk], { audience: "acc_1", issuer: opts.issuer });
  expect(verified.plan).toEqual(plan);
  expect(verified.jti).toBe("pln_1");
  expect(verified.exp! - verified.iat!).toBe(600);

  const [h, p, s] = token.split(".");
  const header = JSON.parse(Buffer.from(h, "base64url").toString());
  expect(header).toEqual({ alg: "EdDSA", kid: key.kid, typ: EXECUTOR_PLAN_TYP });
  const publicKey = crypto.createPublicKey({ key: key.publicJwk as crypto.JsonWebKey, format: "jwk" });
  expect(crypto.verify(null, Buffer.from(`${h}.${p}`), publicKey, Buffer.from(s, "base64url"))).toBe(true);
});

test("a tampered, expired, foreign or misaddressed plan is refused", async () => {
  const key = await loadExecutorSigningKey(await generateExecutorSigningKey());
  const other = await loadExecutorSigningKey(await generateExecutorSigningKey());
  const token = await signExecutorPlan(key, plan, opts);
  const [h, p, s] = token.split(".");
  const body = JSON.parse(Buffer.from(p, "base64url").toString());
  body.plan.steps[0].url = "https://attacker.example/";
  const tampered = `${h}.${Buffer.from(JSON.stringify(body)).toString("base64url")}.${s}`;
  const check = (t: string, jwks = [key.publicJwk], audience = "acc_1") => verifyExecutorPlan(t, jwks, { audience, issuer: opts.issuer });

  await expect(check(tampered)).rejects.toThrow(/signature/i);
  await expect(check(token, [other.publicJwk])).rejects.toThrow(/unknown key id/);
  await expect(check(token, [{ ...other.publicJwk, kid: key.kid }])).rejects.toThrow(/signature/i); // right kid, wrong key
  await expect(check(token, [key.publicJwk], "acc_2")).rejects.toThrow(/aud/);
  const expired = await signExecutorPlan(key, plan, { ...opts, ttlSeconds: -1 });
  await expect(check(expired)).rejects.toThrow(/exp/);
});

test("EXECUTOR_SIGNING_KEY must be a private Ed25519 JWK", async () => {
  await expect(loadExecutorSigningKey("not json")).rejects.toThrow(/not JSON/);
  const { d: _d, ...pub } = JSON.parse(await generateExecutorSigningKey());
  await expect(loadExecutorSigningKey(JSON.stringify(pub))).rejects.toThrow(/private Ed25519 JWK/);
  const rsa = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" });
  await expect(loadExecutorSigningKey(JSON.stringify(rsa))).rejects.toThrow(/private Ed25519 JWK/);
});
