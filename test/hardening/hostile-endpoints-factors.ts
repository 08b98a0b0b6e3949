import { at, CREDENTIALS, type Fixtures, NOT_FOUND, UNAUTHENTICATED, USERS } from './hostile-fixtures.ts';
import {
  bad,
  bodyRows,
  EMOJI,
  type EndpointRows,
  either,
  HOSTILE_IDS,
  RTL,
  SQL,
  TEN_KB,
  V400,
  ZERO_WIDTH,
} from './hostile-rows.ts';

/** The endpoints whose body is a fresh proof (docs/api.md §16): every field optional. */
const FRESH_PROOF = new Set(['DELETE /api/v1/mfa/totp', 'POST /api/v1/mfa/recovery-codes']);

/**
 * A fresh-proof body's rows: no proof at all (`{}`, `null`, no body) is 401
 * `reauthentication_required` (docs/api.md §16), not a 400; two proofs at once are a 400.
 */
function freshProofRows(valid: Record<string, unknown>) {
  const none = bad(401, 'reauthentication_required');
  return [
    ...bodyRows(valid, { nullIsValid: true, optional: Object.keys(valid) }),
    { name: 'no proof', url: '', body: {}, ...none },
    { name: 'null', url: '', raw: 'null', ...none },
    { name: 'empty body', url: '', raw: '', ...none },
    { name: 'two proofs', url: '', body: { ...valid, current_password: 'x' }, ...V400 },
    { name: 'passkey not an object', url: '', body: { passkey: 'x' }, ...V400 },
  ];
}

/** Second factors, passkeys and sessions (docs/api.md §13). */
export function hostileFactorsEndpoints(fx: Fixtures): EndpointRows[] {
  return [
    // Second factors, passkeys and sessions (docs/api.md §13); the admin has no factor.
    {
      method: 'POST',
      path: '/api/v1/login/mfa',
      probeUrl: '/api/v1/login/mfa',
      authenticated: false,
      rows: at('/api/v1/login/mfa', [
        ...bodyRows({ mfa_token: 'A'.repeat(43), code: '123456' }),
        ...HOSTILE_IDS.map((token) => ({
          name: `mfa_token ${token.slice(0, 40)}`,
          url: '',
          body: { mfa_token: token, code: '123456' },
          ...(token.length > 128 ? V400 : bad(401, 'mfa_token_invalid')),
        })),
        {
          name: 'code and passkey',
          url: '',
          body: { mfa_token: 'A'.repeat(43), code: '1', passkey: {} },
          ...V400,
        },
        { name: '10 kB code', url: '', body: { mfa_token: 'A'.repeat(43), code: TEN_KB }, ...V400 },
      ]),
    },
    ...(
      [
        ['POST', '/api/v1/mfa/totp', { current_password: 'well-formed but wrong' }, CREDENTIALS],
        ['POST', '/api/v1/mfa/totp/confirm', { code: '123456' }, bad(401, 'mfa_code_invalid')],
        ['DELETE', '/api/v1/mfa/totp', { code: '123456' }, NOT_FOUND],
        ['POST', '/api/v1/mfa/recovery-codes', { code: 'aaaaa-aaaaa' }, NOT_FOUND],
        [
          'POST',
          '/api/v1/passkeys/registration/options',
          { current_password: 'well-formed but wrong' },
          CREDENTIALS,
        ],
      ] as const
    ).map(([method, path, valid, wrong]) => ({
      method,
      path,
      probeUrl: path,
      authenticated: true,
      rows: at(path, [
        ...(FRESH_PROOF.has(`${method} ${path}`) ? freshProofRows(valid) : bodyRows(valid)),
        { name: 'well-formed, wrong', url: '', body: valid, ...wrong },
        ...[TEN_KB, EMOJI, RTL, ZERO_WIDTH, ...SQL].map((v) => ({
          name: `value ${v.slice(0, 30)}`,
          url: '',
          body: Object.fromEntries(Object.keys(valid).map((k) => [k, v])),
          ...either(V400, wrong),
        })),
        UNAUTHENTICATED,
      ]),
    })),
    {
      method: 'POST',
      path: '/api/v1/passkeys/authentication/options',
      probeUrl: '/api/v1/passkeys/authentication/options',
      authenticated: false,
      rows: at('/api/v1/passkeys/authentication/options', [
        ...bodyRows({ mfa_token: 'A'.repeat(43) }, { nullIsValid: true, optional: ['mfa_token'] }),
        {
          name: 'unknown mfa_token',
          url: '',
          body: { mfa_token: 'A'.repeat(43) },
          ...bad(401, 'mfa_token_invalid'),
        },
        {
          name: 'unknown reset_token',
          url: '',
          body: { reset_token: 'A'.repeat(43) },
          ...bad(410, 'link_invalid'),
        },
        { name: 'reset_token a number', url: '', body: { reset_token: 1 }, ...V400 },
        {
          name: 'reset_token and mfa_token at once',
          url: '',
          body: { reset_token: 'A'.repeat(43), mfa_token: 'A'.repeat(43) },
          ...V400,
        },
      ]),
    },
    ...(['/api/v1/login/passkey', '/api/v1/passkeys'] as const).map((path) => ({
      method: 'POST' as const,
      path,
      probeUrl: path,
      authenticated: path === '/api/v1/passkeys',
      rows: at(path, [
        ...bodyRows({ challenge_id: 'A'.repeat(36), response: {} }),
        {
          name: 'unknown challenge',
          url: '',
          body: { challenge_id: '00000000-0000-7000-8000-000000000000', response: { id: 'x', response: {} } },
          ...(path === '/api/v1/passkeys' ? bad(400, 'passkey_invalid') : bad(401, 'passkey_invalid')),
        },
        {
          name: 'response a string',
          url: '',
          body: { challenge_id: 'A'.repeat(36), response: 'x' },
          ...V400,
        },
        {
          name: 'response deep',
          url: '',
          body: { challenge_id: 'A', response: { a: TEN_KB, b: [SQL] } },
          ...either(V400, bad(400, 'passkey_invalid'), bad(401, 'passkey_invalid')),
        },
      ]),
    })),
    ...(
      [
        ['DELETE', '/api/v1/users/<id>/mfa', (id: string) => `${USERS}/${id}/mfa`, true],
        ['DELETE', '/api/v1/passkeys/<id>', (id: string) => `/api/v1/passkeys/${id}`, true],
        ['DELETE', '/api/v1/sessions/<id>', (id: string) => `/api/v1/sessions/${id}`, true],
        ['GET', '/api/v1/users/<id>/sessions', (id: string) => `${USERS}/${id}/sessions`, true],
        [
          'DELETE',
          '/api/v1/users/<id>/sessions/<session_id>',
          (id: string) => `${USERS}/${fx.targetId || 'x'}/sessions/${id}`,
          true,
        ],
      ] as const
    ).map(([method, path, url, authenticated]) => ({
      method,
      path,
      probeUrl: url('00000000-0000-7000-8000-000000000000'),
      authenticated,
      rows: HOSTILE_IDS.map((id) => ({
        name: `id ${id.slice(0, 40)}`,
        url: url(id),
        // Removing a passkey needs a proof (docs/api.md §16); with one, an unknown id is a 404.
        ...(path === '/api/v1/passkeys/<id>' && { body: { current_password: 'well-formed but wrong' } }),
        ...either(NOT_FOUND, V400),
      })),
    })),
  ];
}
