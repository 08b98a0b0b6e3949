import { ApiError } from '../../../platform/api-error.ts';

/**
 * Redirect URI rules of docs/api.md §17: matched exactly (oidc-provider compares strings), so a
 * registered URI must be an absolute URI without wildcards or a fragment. `web` clients: https, or
 * http on a loopback host (`localhost`, `127.0.0.1`, `[::1]`) for development, the port matched
 * exactly like the rest of the URI (the library widens the port for native clients only). `native` clients (RFC 8252): `http://127.0.0.1` or `http://[::1]` with any port (§7.3), or a
 * private-use scheme in reverse-domain form such as `com.example.app:/callback` (§7.1).
 */
/** The loopback hosts a web client may use with plain http (URL lowercases `hostname`). */
const WEB_LOOPBACKS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function redirectUriProblem(uri: string, applicationType: 'web' | 'native'): string | null {
  if (uri.includes('*')) return 'must not contain wildcards';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  if (uri.includes('#')) return 'must not contain a fragment';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (applicationType === 'web') {
    if (url.protocol === 'https:') return null;
    if (url.protocol === 'http:' && WEB_LOOPBACKS.has(url.hostname)) return null;
    return 'must use https for a web client, or http on localhost, 127.0.0.1 or [::1]';
  }
  if (url.protocol === 'http:') {
    return url.hostname === '127.0.0.1' || url.hostname === '[::1]'
      ? null
      : 'must be http://127.0.0.1, http://[::1] (any port) or a private-use scheme for a native client';
  }
  if (url.protocol === 'https:') return null;
  const scheme = url.protocol.slice(0, -1);
  if (!scheme.includes('.') || /^(javascript|data|file|vbscript|blob)$/i.test(scheme)) {
    return 'a private-use scheme must be in reverse-domain form, e.g. com.example.app:/callback';
  }
  return null;
}

/** Refuses the first bad URI of a list with 400 validation_failed naming its place. */
export function checkRedirectUris(
  field: 'redirect_uris' | 'post_logout_redirect_uris',
  uris: readonly string[],
  applicationType: 'web' | 'native',
): void {
  uris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri, applicationType);
    if (problem !== null) {
      throw new ApiError('validation_failed', {
        detail: `body/${field}/${i} ${problem}`,
        errors: [{ path: `/${field}/${i}`, message: problem }],
      });
    }
  });
}

/** 400 validation_failed for one field. */
export function invalidField(path: string, message: string): ApiError {
  return new ApiError('validation_failed', {
    detail: `body${path} ${message}`,
    errors: [{ path, message }],
  });
}
