import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type CryptoKey, type JWK, type JWTPayload } from "jose";

// Executor plans are signed so a caller that runs the provider writes from its own runtime can
// check, before spending its own credentials, that the plan came from this service, unaltered and still fresh. A
// plan is a JWT signed with Ed25519 (EdDSA, RFC 8037) by jose: any JWT library verifies it against the published
// public key (a JWKS), and the caller uses the verified payload, never a plain copy. `jti` is the plan id (single
// use is enforced when results come back), `exp` its expiry.

export const EXECUTOR_PLAN_TYP = "trendgate-executor-plan+jwt";
const ALG = "EdDSA";

export interface ExecutorSigningKey {
  kid: string;
  privateKey: CryptoKey;
  /** The public half as published (kid, alg and use set). */
  publicJwk: JWK;
}

/** A new private key as JSON (a JWK), for EXECUTOR_SIGNING_KEY: made once per deployment and shared by the fleet. */
export async function generateExecutorSigningKey(): Promise<string> {
  const { privateKey } = await generateKeyPair(ALG, { crv: "Ed25519", extractable: true });
  return JSON.stringify(await exportJWK(privateKey));
}

/** Loads EXECUTOR_SIGNING_KEY; the key id is the public key's RFC 7638 thumbprint, so it changes with the key. */
export async function loadExecutorSigningKey(privateJwkJson: string): Promise<ExecutorSigningKey> {
  let jwk: JWK;
  try {
    jwk = JSON.parse(privateJwkJson) as JWK;
  } catch {
    throw new Error("EXECUTOR_SIGNING_KEY is not JSON (a private Ed25519 JWK is expected)");
  }
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || !jwk.d) throw new Error("EXECUTOR_SIGNING_KEY must be a private Ed25519 JWK (kty OKP, crv Ed25519, with d)");
  const { d: _private, ...pub } = jwk;
  const kid = await calculateJwkThumbprint(pub);
  const privateKey = (await importJWK(jwk, ALG)) as CryptoKey;
  return { kid, privateKey, publicJwk: { kty: pub.kty, crv: pub.crv, x: pub.x, kid, alg: ALG, use: "sig" } };
}

/** Signs a plan document for `audience` (the account) valid for `ttlSeconds`; `planId` becomes `jti`. */
export async function signExecutorPlan(key: ExecutorSigningKey, plan: Record<string, unknown>, opts: { planId: string; audience: string; ttlSeconds: number; issuer: string }): Promise<string> {
  return new SignJWT({ plan })
    .setProtectedHeader({ alg: ALG, kid: key.kid, typ: EXECUTOR_PLAN_TYP })
    .setIssuer(opts.issuer)
    .setAudience(opts.audience)
    .setJti(opts.planId)
    .setIssuedAt()
    .setExpirationTime(`${opts.ttlSeconds}s`)
    .sign(key.privateKey);
}

/** Verifies a signed plan as a caller would (with the published public keys); throws on any tampering or expiry
 * (`clockTolerance` seconds past `exp` are allowed: results of a plan started in time may come later). */
export async function verifyExecutorPlan(token: string, publicJwks: JWK[], opts: { audience: string; issuer: string; clockTolerance?: number }): Promise<JWTPayload & { plan: Record<string, unknown> }> {
  const { payload } = await jwtVerify(token, async (header) => {
    const jwk = publicJwks.find((k) => k.kid === header.kid);
    if (!jwk) throw new Error(`unknown key id ${header.kid}`);
    return importJWK(jwk, ALG);
  }, { algorithms: [ALG], typ: EXECUTOR_PLAN_TYP, audience: opts.audience, issuer: opts.issuer, clockTolerance: opts.clockTolerance ?? 0 });
  return payload as JWTPayload & { plan: Record<string, unknown> };
}
