import {
  at,
  CREDENTIALS,
  type Fixtures,
  flipLast,
  lookAlikes,
  NOT_FOUND,
  query,
  UNAUTHENTICATED,
} from './hostile-fixtures.ts';
import {
  BAD_LIMITS,
  bad,
  bodyRows,
  EMOJI,
  type EndpointRows,
  HOSTILE_IDS,
  RTL,
  SQL,
  TEN_KB,
  tamperedCursors,
  V400,
  ZERO_WIDTH,
} from './hostile-rows.ts';

/** Sign-in, tokens, password change, identity providers and module switches (docs/api.md §5, §6, §2). */
export function hostileAuthEndpoints(fx: Fixtures): EndpointRows[] {
  return [
    {
      method: 'POST',
      path: '/api/v1/login',
      probeUrl: '/api/v1/login',
      authenticated: false,
      rows: at('/api/v1/login', [
        ...bodyRows({ email: fx.adminEmail, password: 'well-formed but wrong' }),
        { name: 'empty email', url: '', body: { email: '', password: 'x' }, ...V400 },
        { name: 'empty password', url: '', body: { email: fx.adminEmail, password: '' }, ...V400 },
        { name: '10 kB password', url: '', body: { email: fx.adminEmail, password: TEN_KB }, ...V400 },
        // With the right password: a look-alike of the admin's address must not log in as the admin.
        ...lookAlikes(fx.adminEmail).map(([name, email]) => ({
          name: `look-alike email (${name})`,
          url: '',
          body: { email, password: fx.adminPassword },
          ...(email.length > 320 ? V400 : CREDENTIALS),
        })),
        {
          name: 'mixed case, wrong password',
          url: '',
          body: { email: 'ROOT@Gatehouse.TEST', password: 'nope' },
          ...CREDENTIALS,
        },
        {
          name: 'password + zero-width',
          url: '',
          body: { email: fx.adminEmail, password: `${fx.adminPassword}\u200b` },
          ...CREDENTIALS,
        },
        {
          name: 'password + trailing space',
          url: '',
          body: { email: fx.adminEmail, password: `${fx.adminPassword} ` },
          ...CREDENTIALS,
        },
        {
          name: 'password in RTL',
          url: '',
          body: { email: fx.adminEmail, password: `${RTL}${fx.adminPassword}` },
          ...CREDENTIALS,
        },
        ...SQL.map((s) => ({ name: `SQL ${s}`, url: '', body: { email: s, password: s }, ...CREDENTIALS })),
      ]),
    },
    {
      method: 'POST',
      path: '/api/v1/refresh-token',
      probeUrl: '/api/v1/refresh-token',
      authenticated: false,
      rows: at('/api/v1/refresh-token', [
        ...bodyRows({ refresh_token: 'A'.repeat(43) }),
        { name: 'empty token', url: '', body: { refresh_token: '' }, ...V400 },
        { name: '10 kB token', url: '', body: { refresh_token: TEN_KB }, ...V400 },
        ...[
          ['last character changed', flipLast(fx.refreshToken)],
          ['truncated', fx.refreshToken.slice(0, -1)],
          ['one character more', `${fx.refreshToken}A`],
          ['upper-cased', fx.refreshToken.toUpperCase()],
          ['zero-width inside', `${fx.refreshToken.slice(0, 5)}\u200b${fx.refreshToken.slice(5)}`],
          ['path', '../../etc/passwd'],
          ['emoji', EMOJI],
          ...SQL.map((s) => [`SQL ${s}`, s]),
        ].map(([name, token]) => ({
          name: `tampered: ${name}`,
          url: '',
          body: { refresh_token: token },
          // A wrong token never revokes the session it resembles (checked by the unchanged state).
          ...bad(401, 'refresh_token_invalid'),
        })),
      ]),
    },
    {
      method: 'POST',
      path: '/api/v1/logout',
      probeUrl: '/api/v1/logout',
      authenticated: true,
      rows: at('/api/v1/logout', [
        ...bodyRows({ scope: 'global' }, { nullIsValid: true, optional: ['scope'] }),
        ...['everything', 'GLOBAL', ' global', '', EMOJI].map((scope) => ({
          name: `scope ${JSON.stringify(scope)}`,
          url: '',
          body: { scope },
          ...V400,
        })),
        UNAUTHENTICATED,
      ]),
    },
    {
      method: 'PUT',
      path: '/api/v1/change-password',
      probeUrl: '/api/v1/change-password',
      authenticated: true,
      rows: at('/api/v1/change-password', [
        // The base is valid: every generic row must be refused before the password is touched.
        ...bodyRows({ current_password: fx.adminPassword, new_password: 'an entirely fresh passphrase 31' }),
        ...[
          ['empty', ''],
          ['short', 'short'],
          ['10 kB (over 256, never truncated)', TEN_KB],
          ['257 characters', 'q'.repeat(257)],
          ['containing the local part', 'root root root root root'],
        ].map(([name, pw]) => ({
          name: `weak new password: ${name}`,
          url: '',
          body: { current_password: fx.adminPassword, new_password: pw },
          ...bad(422, 'weak_password'),
        })),
        {
          name: '10 kB current password',
          url: '',
          body: { current_password: TEN_KB, new_password: 'an entirely fresh passphrase 31' },
          ...V400,
        },
        {
          name: 'current password + zero-width',
          url: '',
          body: {
            current_password: `${fx.adminPassword}\u200b`,
            new_password: 'an entirely fresh passphrase 31',
          },
          ...CREDENTIALS,
        },
        UNAUTHENTICATED,
      ]),
    },
    {
      method: 'POST',
      path: '/api/v1/idp/verify',
      probeUrl: '/api/v1/idp/verify',
      authenticated: false,
      rows: at('/api/v1/idp/verify', [
        ...bodyRows({ id_token: 'e30.e30.x', nonce: 'n-0S6_WzA2Mj' }, { optional: ['nonce'] }),
        { name: 'empty token', url: '', body: { id_token: '' }, ...V400 },
        { name: 'token over 16 KiB', url: '', body: { id_token: 'a'.repeat(16_385) }, ...V400 },
        { name: 'nonce over 512', url: '', body: { id_token: 'e30.e30.x', nonce: 'n'.repeat(513) }, ...V400 },
        ...[
          ['not a JWT', 'not-a-jwt'],
          ['three empty parts', '..'],
          ['10 kB', TEN_KB],
          ['path', '../../etc/passwd'],
          ['emoji', EMOJI],
          ['zero-width', `e30${ZERO_WIDTH}.e30.x`],
          ['a Gatehouse access token', fx.accessToken],
          ...SQL.map((s) => [`SQL ${s}`, s]),
        ].map(([name, token]) => ({
          name: `garbage token: ${name}`,
          url: '',
          body: { id_token: token },
          ...bad(401, 'idp_token_invalid'),
        })),
      ]),
    },
    {
      method: 'PUT',
      path: '/api/v1/admin/modules/<name>',
      probeUrl: '/api/v1/admin/modules/idp',
      authenticated: true,
      rows: [
        ...at('/api/v1/admin/modules/idp', [
          ...bodyRows({ enabled: false }),
          ...[{}, { enabled: 'false' }, { enabled: 0 }, { enabled: null }, { enabled: [false] }].map(
            (body) => ({
              name: `body ${JSON.stringify(body)}`,
              url: '',
              body,
              ...V400,
            }),
          ),
          UNAUTHENTICATED,
        ]),
        ...[...HOSTILE_IDS, 'IDP', 'idp%20', encodeURIComponent("idp' OR '1'='1")].map((name) => ({
          name: `module ${name.slice(0, 40)}`,
          url: `/api/v1/admin/modules/${name}`,
          body: { enabled: false },
          ...NOT_FOUND,
        })),
        {
          name: 'module name of 65 characters',
          url: `/api/v1/admin/modules/${'m'.repeat(65)}`,
          body: { enabled: false },
          ...V400,
        },
      ],
    },
    {
      method: 'GET',
      path: '/api/v1/admin/audit',
      probeUrl: '/api/v1/admin/audit',
      authenticated: true,
      rows: [
        ...query('/api/v1/admin/audit', 'limit', BAD_LIMITS),
        ...query('/api/v1/admin/audit', 'cursor', tamperedCursors(fx.auditCursor)),
        ...query('/api/v1/admin/audit', 'actor', ['%00', 'a'.repeat(65), '']),
        ...query('/api/v1/admin/audit', 'target', [`x%00`, 't'.repeat(201)]),
        ...query('/api/v1/admin/audit', 'action', [
          encodeURIComponent("login.failure' OR 1=1"),
          'LOGIN.FAILURE',
        ]),
        ...query('/api/v1/admin/audit', 'outcome', ['maybe']),
        ...query('/api/v1/admin/audit', 'from', ['yesterday', '2026-02-30T00:00:00Z', '1e12']),
        {
          name: 'from after to',
          url: '/api/v1/admin/audit?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z',
          ...V400,
        },
        { name: 'limit twice', url: '/api/v1/admin/audit?limit=1&limit=2', ...V400 },
        { name: 'unknown parameter', url: '/api/v1/admin/audit?q=x', ...V400 },
        { name: '__proto__ parameter', url: '/api/v1/admin/audit?__proto__=1', ...V400 },
        { name: 'bracket syntax', url: '/api/v1/admin/audit?constructor[prototype][admin]=1', ...V400 },
        { ...UNAUTHENTICATED, url: '/api/v1/admin/audit' },
      ],
    },
  ];
}
