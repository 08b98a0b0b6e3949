import { importPKCS8, SignJWT } from 'jose';
import { ApiError } from '../../../platform/api-error.ts';

/** The presets of docs/api.md §18. */
export type PresetName = 'google' | 'microsoft' | 'gitlab' | 'apple' | 'github';
/** `saml`: a SAML 2.0 connection of the `sso` module (docs/api.md §23). */
export type ProviderKind = 'oidc' | 'github' | 'saml';

/** Settings a preset keeps beside the common fields (none of them secret). */
export interface PresetSettings {
  tenant_id?: string;
  team_id?: string;
  key_id?: string;
  api_url?: string;
}

interface PresetDefaults {
  kind: ProviderKind;
  displayName: string;
  /** Fixed issuer, or null when the preset computes it (microsoft) or takes it (gitlab: self-hosted). */
  issuer: string | null;
  scopes: string[];
}

export const PRESETS: Readonly<Record<PresetName, PresetDefaults>> = {
  google: {
    kind: 'oidc',
    displayName: 'Google',
    issuer: 'https://accounts.google.com',
    scopes: ['openid', 'email', 'profile'],
  },
  microsoft: { kind: 'oidc', displayName: 'Microsoft', issuer: null, scopes: ['openid', 'email', 'profile'] },
  gitlab: {
    kind: 'oidc',
    displayName: 'GitLab',
    issuer: 'https://gitlab.com',
    scopes: ['openid', 'email', 'profile'],
  },
  apple: {
    kind: 'oidc',
    displayName: 'Apple',
    issuer: 'https://appleid.apple.com',
    scopes: ['openid', 'email', 'name'],
  },
  github: {
    kind: 'github',
    displayName: 'GitHub',
    issuer: 'https://github.com',
    scopes: ['read:user', 'user:email'],
  },
};

/** The OAuth endpoints of the github kind: github.com, or a GitHub Enterprise Server (or a test double). */
export const GITHUB_API = 'https://api.github.com';

// "common", "organizations" and "consumers" are multi-tenant endpoints whose tokens' `iss` names each
// user's own tenant: no single issuer to pin, so they are refused (docs/providers.md).
const TENANT_GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Microsoft's v2.0 issuer of one tenant. */
export function microsoftIssuer(tenantId: string): string {
  if (!TENANT_GUID.test(tenantId)) {
    throw new ApiError('validation_failed', {
      detail:
        'tenant_id must be the directory (tenant) id, a GUID; "common", "organizations", "consumers" and domain names are refused',
    });
  }
  return `https://login.microsoftonline.com/${tenantId.toLowerCase()}/v2.0`;
}

/** An issuer or API URL Gatehouse may call: https, or http on a loopback host (development and tests). */
export function checkServerUrl(field: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ApiError('validation_failed', { detail: `${field} must be an absolute URL` });
  }
  const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new ApiError('validation_failed', {
      detail: `${field} must be an https URL (http only on a loopback host)`,
    });
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ApiError('validation_failed', {
      detail: `${field} must not carry a query, fragment or credentials`,
    });
  }
  return value;
}

/** Checks an Apple `.p8` key (PKCS #8, P-256) so a bad one is refused at configuration, not at sign-in. */
export async function checkApplePrivateKey(pem: string): Promise<void> {
  try {
    await importPKCS8(pem, 'ES256');
  } catch {
    throw new ApiError('validation_failed', {
      detail: 'private_key must be the PKCS #8 PEM of an ES256 (P-256) key, as Apple hands it out (.p8)',
    });
  }
}

// Apple accepts client secrets valid up to six months; a short one limits what a leak is worth.
const APPLE_SECRET_TTL_S = 5 * 60;

/** Apple's client secret: an ES256 JWT signed with the team's key (Sign in with Apple REST API). */
export async function appleClientSecret(
  settings: { teamId: string; keyId: string; clientId: string },
  privateKeyPem: string,
): Promise<string> {
  const key = await importPKCS8(privateKeyPem, 'ES256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: settings.keyId })
    .setIssuer(settings.teamId)
    .setSubject(settings.clientId)
    .setAudience('https://appleid.apple.com')
    .setIssuedAt(now)
    .setExpirationTime(now + APPLE_SECRET_TTL_S)
    .sign(key);
}
