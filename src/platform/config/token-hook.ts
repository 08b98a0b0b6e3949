import { urlProblem } from '../outbound/address-guard.ts';
import { quoted } from '../quoted.ts';
import { ConfigError, type EnvReader } from './reader.ts';
import type { TokenHookSettings } from './types.ts';

/** The claims an answer may not set: registered JWT/OIDC claims and Gatehouse's own (§21). */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
  'client_id',
  'scope',
  'auth_time',
  'amr',
  'acr',
  'azp',
  'sid',
  'nonce',
  'at_hash',
  'c_hash',
  'org_id',
  'roles',
  'organizations',
  'email',
  'email_verified',
  'typ',
  'cnf',
  // Not a claim anyone means: a key JSON.parse keeps as an own property, refused rather than carried.
  '__proto__',
]);

/**
 * What the authorization server's ID tokens already carry besides the reserved names (its account
 * claims and the library's own): TOKEN_HOOK_ID_TOKEN_CLAIMS may not declare them, the hook only adds.
 */
const ID_TOKEN_RELEASED = new Set(['name', 'updated_at', 's_hash']);

/** A claim name TOKEN_HOOK_ID_TOKEN_CLAIMS accepts (a JSON key a relying party can read plainly). */
const CLAIM_NAME = /^[A-Za-z][A-Za-z0-9_.:/-]{0,127}$/;

/**
 * The claims hook (docs/api.md §21, docs/claims-hook.md): TOKEN_HOOK_URL follows the webhooks' SSRF
 * rules at start (https unless WEBHOOK_ALLOW_HTTP, no userinfo, no literal refused address unless
 * WEBHOOK_ALLOW_PRIVATE); a name resolving to a refused address is refused at each call instead.
 * A URL without its secret, or a secret not in the `whsec_` form, stops the start too: an unsigned
 * hook would let anyone who can reach the receiver's URL pose as Gatehouse.
 */
export function tokenHookSettings(
  r: EnvReader,
  webhooks: { allowHttp: boolean; allowPrivate: boolean },
): TokenHookSettings | null {
  const url = r.str('TOKEN_HOOK_URL') ?? null;
  const secret = r.str('TOKEN_HOOK_SECRET') ?? null;
  const timeoutMs = r.int('TOKEN_HOOK_TIMEOUT_MS', 2000, 50, 30_000);
  const failureGiven = (r.str('TOKEN_HOOK_FAILURE') ?? 'deny').toLowerCase();
  const idTokenClaims = (r.str('TOKEN_HOOK_ID_TOKEN_CLAIMS') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const problems: string[] = [];
  for (const name of idTokenClaims) {
    if (!CLAIM_NAME.test(name)) {
      problems.push(
        `TOKEN_HOOK_ID_TOKEN_CLAIMS: ${quoted(name.slice(0, 40))} is not a claim name (a letter, then up to 127 of A-Z a-z 0-9 _ . : / -)`,
      );
    } else if (RESERVED_CLAIMS.has(name) || ID_TOKEN_RELEASED.has(name)) {
      problems.push(
        `TOKEN_HOOK_ID_TOKEN_CLAIMS: ${quoted(name)} is a claim Gatehouse sets itself; the hook may only add others`,
      );
    }
  }
  if (new Set(idTokenClaims).size !== idTokenClaims.length) {
    problems.push('TOKEN_HOOK_ID_TOKEN_CLAIMS names a claim twice');
  }
  if (failureGiven !== 'deny' && failureGiven !== 'allow') {
    problems.push(`TOKEN_HOOK_FAILURE must be deny or allow, got ${quoted(failureGiven)}`);
  }
  if (secret !== null && !isWebhookSecret(secret)) {
    problems.push('TOKEN_HOOK_SECRET must be whsec_ followed by base64 of at least 24 bytes');
  }
  if (url === null) {
    if (secret !== null) problems.push('TOKEN_HOOK_SECRET is set but TOKEN_HOOK_URL is not');
    if (idTokenClaims.length > 0)
      problems.push('TOKEN_HOOK_ID_TOKEN_CLAIMS is set but TOKEN_HOOK_URL is not');
  } else {
    const why = urlProblem(url, webhooks);
    // The URL is not quoted back: it may carry a user name and password.
    if (why !== null) problems.push(`TOKEN_HOOK_URL ${why}`);
    if (secret === null) problems.push('TOKEN_HOOK_URL is set but TOKEN_HOOK_SECRET is not (whsec_…)');
  }
  if (problems.length > 0) throw new ConfigError(problems.join('\n'));
  if (url === null || secret === null) return null;
  return { url, secret, timeoutMs, failure: failureGiven as 'deny' | 'allow', idTokenClaims };
}

/** `whsec_` and the base64 of a key of at least 24 bytes (the form `standardwebhooks` reads). */
function isWebhookSecret(value: string): boolean {
  const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value);
  return m?.[1] !== undefined && Buffer.from(m[1], 'base64').length >= 24;
}
