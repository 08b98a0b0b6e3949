import { at, CREDENTIALS, type Fixtures, lookAlikes } from './hostile-fixtures.ts';
import { bodyRows, type EndpointRows, HOSTILE_IDS, V400 } from './hostile-rows.ts';

/** Sign-in by e-mail (docs/api.md §20): every row is refused before anything is sent or signed in. */
export function hostilePasswordlessEndpoints(fx: Fixtures): EndpointRows[] {
  const lookAlikeRows = (extra: Record<string, unknown>) =>
    lookAlikes(fx.adminEmail).map(([name, email]) => ({
      name: `email look-alike (${name})`,
      url: '',
      body: { email, ...extra },
      ...V400,
    }));
  return [
    {
      method: 'POST',
      path: '/api/v1/login/email',
      probeUrl: '/api/v1/login/email',
      authenticated: false,
      rows: at('/api/v1/login/email', [...bodyRows({ email: 'target@example.com' }), ...lookAlikeRows({})]),
    },
    {
      method: 'POST',
      path: '/api/v1/login/email/verify',
      probeUrl: '/api/v1/login/email/verify',
      authenticated: false,
      rows: at('/api/v1/login/email/verify', [
        ...bodyRows({ email: 'target@example.com', code: '123456' }),
        ...bodyRows({ token: 'A'.repeat(43) }),
        ...lookAlikeRows({ code: '123456' }),
        {
          name: 'both a code and a token',
          url: '',
          body: { email: fx.adminEmail, code: '1', token: 'x' },
          ...V400,
        },
        ...[...HOSTILE_IDS, 'A'.repeat(42), 'A'.repeat(44)].map((token) => ({
          name: `token ${token.slice(0, 40)}`,
          url: '',
          body: { token },
          // Longer than any token could be (512): malformed, not a wrong token.
          ...(token.length > 512 ? V400 : CREDENTIALS),
        })),
        ...['', '12345', '1234567', 'abcdef', '12 34 56', '１２３４５６'].map((code) => ({
          name: `code ${JSON.stringify(code)}`,
          url: '',
          body: { email: fx.adminEmail, code },
          ...(code === '' ? V400 : CREDENTIALS),
        })),
      ]),
    },
  ];
}
