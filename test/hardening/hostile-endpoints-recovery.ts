import {
  at,
  CREDENTIALS,
  type Fixtures,
  lookAlikes,
  NOT_FOUND,
  UNAUTHENTICATED,
  USERS,
} from './hostile-fixtures.ts';
import { bad, bodyRows, type EndpointRows, either, HOSTILE_IDS, TEN_KB, V400 } from './hostile-rows.ts';

/** Recovery, e-mail and sign-up (docs/api.md §11, §12). */
export function hostileRecoveryEndpoints(fx: Fixtures): EndpointRows[] {
  return [
    // docs/api.md §11–12 (recovery, email, registration): every row is refused before anything changes.
    {
      method: 'POST',
      path: '/api/v1/password/forgot',
      probeUrl: '/api/v1/password/forgot',
      authenticated: false,
      rows: at('/api/v1/password/forgot', [
        ...bodyRows({ email: 'target@example.com' }),
        ...lookAlikes(fx.adminEmail).map(([name, email]) => ({
          name: `email look-alike (${name})`,
          url: '',
          body: { email },
          ...V400,
        })),
      ]),
    },
    ...(['/api/v1/password/reset', '/api/v1/email/verify'] as const).map((base) => ({
      method: 'GET' as const,
      path: `${base}/<token>`,
      probeUrl: `${base}/${'A'.repeat(43)}`,
      authenticated: false,
      rows: [...HOSTILE_IDS, 'A'.repeat(43), 'A'.repeat(42), `${'A'.repeat(43)}%00`].map((token) => ({
        name: `token ${token.slice(0, 40)}`,
        url: `${base}/${token}`,
        ...either(bad(410, 'link_invalid'), NOT_FOUND, V400),
      })),
    })),
    {
      method: 'POST',
      path: '/api/v1/password/reset/<token>',
      probeUrl: `/api/v1/password/reset/${'A'.repeat(43)}`,
      authenticated: false,
      rows: [
        ...at(`/api/v1/password/reset/${'A'.repeat(43)}`, [
          ...bodyRows({ password: 'an entirely fresh passphrase 31' }),
          {
            name: 'unknown token',
            url: '',
            body: { password: 'an entirely fresh passphrase 31' },
            ...bad(410, 'link_invalid'),
          },
          {
            name: 'mfa_code a number',
            url: '',
            body: { password: 'an entirely fresh passphrase 31', mfa_code: 123456 },
            ...V400,
          },
          {
            name: 'passkey not an object',
            url: '',
            body: { password: 'an entirely fresh passphrase 31', passkey: 'x' },
            ...V400,
          },
          {
            name: 'passkey and mfa_code at once',
            url: '',
            body: {
              password: 'an entirely fresh passphrase 31',
              mfa_code: '123456',
              passkey: { challenge_id: 'x', response: {} },
            },
            ...V400,
          },
        ]),
        ...HOSTILE_IDS.map((token) => ({
          name: `token ${token.slice(0, 40)}`,
          url: `/api/v1/password/reset/${token}`,
          body: { password: 'an entirely fresh passphrase 31' },
          ...either(bad(410, 'link_invalid'), NOT_FOUND),
        })),
      ],
    },
    {
      method: 'POST',
      path: '/api/v1/users/<id>/password-reset',
      probeUrl: `${USERS}/${fx.targetId || '00000000-0000-7000-8000-000000000000'}/password-reset`,
      authenticated: true,
      rows: [
        ...HOSTILE_IDS.map((id) => ({
          name: `id ${id.slice(0, 40)}`,
          url: `${USERS}/${id}/password-reset`,
          ...NOT_FOUND,
        })),
        {
          name: 'a body with a field',
          url: `${USERS}/${fx.targetId}/password-reset`,
          body: { email: 'x@example.com' },
          ...V400,
        },
        {
          name: 'no token',
          url: `${USERS}/${fx.targetId}/password-reset`,
          anonymous: true,
          ...bad(401, 'unauthenticated'),
        },
      ],
    },
    {
      method: 'POST',
      path: '/api/v1/email/verification',
      probeUrl: '/api/v1/email/verification',
      authenticated: false,
      rows: at('/api/v1/email/verification', [
        ...bodyRows({ email: fx.adminEmail, password: fx.adminPassword }, { nullIsValid: true }),
        { name: 'no token, no body', url: '', ...bad(401, 'unauthenticated') },
        // Without REQUIRE_VERIFIED_EMAIL the body form does not exist.
        {
          name: 'email and password',
          url: '',
          body: { email: fx.adminEmail, password: fx.adminPassword },
          ...bad(401, 'unauthenticated'),
        },
      ]),
    },
    {
      method: 'POST',
      path: '/api/v1/email/verify/<token>',
      probeUrl: `/api/v1/email/verify/${'A'.repeat(43)}`,
      authenticated: false,
      rows: [
        ...HOSTILE_IDS.map((token) => ({
          name: `token ${token.slice(0, 40)}`,
          url: `/api/v1/email/verify/${token}`,
          ...either(bad(410, 'link_invalid'), NOT_FOUND),
        })),
        {
          name: 'a body with a field',
          url: `/api/v1/email/verify/${'A'.repeat(43)}`,
          body: { email: 'x@example.com' },
          ...V400,
        },
      ],
    },
    {
      method: 'POST',
      path: '/api/v1/email/change',
      probeUrl: '/api/v1/email/change',
      authenticated: true,
      rows: at('/api/v1/email/change', [
        // The proof is optional in the schema: a body without one is 401 reauthentication_required
        // (docs/api.md §16), not a 400.
        ...bodyRows(
          { new_email: 'moved@example.com', current_password: 'well-formed but wrong' },
          { optional: ['current_password'] },
        ),
        {
          name: 'no proof',
          url: '',
          body: { new_email: 'moved@example.com' },
          ...bad(401, 'reauthentication_required'),
        },
        {
          name: 'two proofs',
          url: '',
          body: { new_email: 'moved@example.com', current_password: 'x', code: '123456' },
          ...V400,
        },
        {
          name: 'wrong password',
          url: '',
          body: { new_email: 'moved@example.com', current_password: 'well-formed but wrong' },
          ...CREDENTIALS,
        },
        // With the right password: a look-alike address is refused before anything is sent.
        ...lookAlikes('moved@example.com').map(([name, email]) => ({
          name: `new_email look-alike (${name})`,
          url: '',
          body: { new_email: email, current_password: fx.adminPassword },
          ...V400,
        })),
        UNAUTHENTICATED,
      ]),
    },
    {
      method: 'POST',
      path: '/api/v1/signup',
      probeUrl: '/api/v1/signup',
      authenticated: false,
      rows: at('/api/v1/signup', [
        ...bodyRows({ email: 'signup-hostile@example.com', password: 'a long enough passphrase 77' }),
        ...lookAlikes(fx.adminEmail).map(([name, email]) => ({
          name: `email look-alike (${name})`,
          url: '',
          body: { email, password: 'a long enough passphrase 77' },
          ...V400,
        })),
        {
          name: 'short password',
          url: '',
          body: { email: 'weak@example.com', password: 'short' },
          ...bad(422, 'weak_password'),
        },
        {
          name: 'name with a line break',
          url: '',
          body: { email: 'n@example.com', password: 'a long enough passphrase 77', name: 'a\nb' },
          ...V400,
        },
        {
          name: '10 kB name',
          url: '',
          body: { email: 'n@example.com', password: 'a long enough passphrase 77', name: TEN_KB },
          ...V400,
        },
      ]),
    },
  ];
}
