import * as oidc from 'openid-client';
import type { AppContext } from '../../../kernel/context.types.ts';
import { ApiError } from '../../../platform/api-error.ts';
import type { UpstreamIdentity } from './id-token.ts';
import { providerUnavailable } from './oidc-client.ts';
import { GITHUB_API } from './presets.ts';
import type { Provider } from './providers.service.ts';

interface GithubEmail {
  email?: unknown;
  primary?: unknown;
  verified?: unknown;
}

/**
 * GitHub (OAuth 2, no ID token): the identity is (issuer, the numeric user id) — never the login,
 * which its owner can change — and only the verified primary address counts (docs/api.md §18).
 */
export async function githubIdentity(
  ctx: AppContext,
  provider: Provider,
  config: oidc.Configuration,
  accessToken: string,
): Promise<UpstreamIdentity> {
  const api = (provider.settings.api_url ?? GITHUB_API).replace(/\/+$/, '');
  const get = async (path: string): Promise<unknown> => {
    const headers = new Headers({
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'Gatehouse',
    });
    let res: Response;
    try {
      res = await oidc.fetchProtectedResource(
        config,
        accessToken,
        new URL(`${api}${path}`),
        'GET',
        null,
        headers,
      );
    } catch (err) {
      throw providerUnavailable(`GitHub ${path} failed`, err);
    }
    if (res.status !== 200) throw providerUnavailable(`GitHub ${path} answered HTTP ${res.status}`);
    return res.json();
  };
  const user = (await get('/user')) as { id?: unknown; login?: unknown; name?: unknown };
  if (typeof user.id !== 'number' || !Number.isSafeInteger(user.id) || user.id <= 0) {
    throw new ApiError('idp_token_invalid', { detail: 'GitHub sent no numeric user id' });
  }
  const emails = await get('/user/emails');
  const primary = Array.isArray(emails)
    ? (emails as GithubEmail[]).find(
        (e) => e.primary === true && e.verified === true && typeof e.email === 'string',
      )
    : undefined;
  const name = typeof user.name === 'string' && user.name.trim() !== '' ? user.name.trim() : null;
  void ctx;
  return {
    identity: {
      issuer: provider.issuer,
      subject: String(user.id),
      email: primary ? (primary.email as string) : null,
      emailVerified: primary !== undefined,
      name: name ?? (typeof user.login === 'string' ? user.login : null),
      expiresAt: Date.now(),
    },
    organization: null,
    idToken: null,
  };
}
