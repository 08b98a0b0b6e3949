import {
  at,
  type Fixtures,
  lookAlikes,
  NOT_FOUND,
  query,
  UNAUTHENTICATED,
  USERS,
} from './hostile-fixtures.ts';
import {
  BAD_LIMITS,
  bad,
  bodyRows,
  type EndpointRows,
  either,
  HOSTILE_IDS,
  TEN_KB,
  tamperedCursors,
  V400,
} from './hostile-rows.ts';

/** Users, the audit log and invitations (docs/api.md §7, §8). */
export function hostileUsersEndpoints(fx: Fixtures): EndpointRows[] {
  return [
    {
      method: 'GET',
      path: '/api/v1/users',
      probeUrl: USERS,
      authenticated: true,
      rows: [
        ...query(USERS, 'limit', BAD_LIMITS),
        ...query(USERS, 'cursor', tamperedCursors(fx.usersCursor)),
        ...query(USERS, 'sort', [
          'password_hash',
          encodeURIComponent('email; drop table users'),
          'EMAIL',
          '--email',
        ]),
        ...query(USERS, 'role', ['superadmin', 'ADMIN', '%00']),
        ...query(USERS, 'status', ['deleted']),
        ...query(USERS, 'created_after', ['yesterday', encodeURIComponent("2026-01-01' OR '1'='1")]),
        { name: 'unknown parameter', url: `${USERS}?password_hash=x`, ...V400 },
        { ...UNAUTHENTICATED, url: USERS },
      ],
    },
    {
      method: 'GET',
      path: '/api/v1/users/search',
      probeUrl: `${USERS}/search?q=root`,
      authenticated: true,
      rows: [
        { name: 'q missing', url: `${USERS}/search`, ...V400 },
        ...query(`${USERS}/search`, 'q', ['', 'q'.repeat(101), TEN_KB, 'a%00']),
        ...query(`${USERS}/search`, 'limit', BAD_LIMITS).map((r) => ({
          ...r,
          url: r.url.replace('?', '?q=a&'),
        })),
        ...tamperedCursors(fx.usersCursor).map((c) => ({
          name: `cursor ${c.slice(0, 30)}`,
          url: `${USERS}/search?q=a&cursor=${c}`,
          ...V400,
        })),
      ],
    },
    {
      method: 'GET',
      path: '/api/v1/users/<id>',
      probeUrl: `${USERS}/${fx.adminId}`,
      authenticated: true,
      rows: HOSTILE_IDS.map((id) => ({ name: `id ${id.slice(0, 40)}`, url: `${USERS}/${id}`, ...NOT_FOUND })),
    },
    {
      method: 'PUT',
      path: '/api/v1/users/<id>',
      probeUrl: `${USERS}/${fx.targetId}`,
      authenticated: true,
      rows: [
        ...HOSTILE_IDS.map((id) => ({
          name: `id ${id.slice(0, 40)}`,
          url: `${USERS}/${id}`,
          body: { name: 'X' },
          ...NOT_FOUND,
        })),
        ...at(`${USERS}/${fx.targetId}`, [
          ...bodyRows({ name: 'Renamed Target' }, { optional: ['name'] }),
          { name: '10 kB name', url: '', body: { name: TEN_KB }, ...V400 },
          ...['superadmin', 'ADMIN', ''].map((role) => ({
            name: `role ${role}`,
            url: '',
            body: { role },
            ...V400,
          })),
          ...['deleted', 'ACTIVE'].map((status) => ({
            name: `status ${status}`,
            url: '',
            body: { status },
            ...V400,
          })),
          ...lookAlikes(fx.adminEmail).map(([name, email]) => ({
            name: `email look-alike (${name})`,
            url: '',
            body: { email },
            ...V400,
          })),
          {
            name: 'email of the admin, upper-cased',
            url: '',
            body: { email: fx.adminEmail.toUpperCase() },
            ...bad(409, 'email_taken'),
          },
          { name: 'short password', url: '', body: { password: 'short' }, ...bad(422, 'weak_password') },
          // Over 256 is the policy's 422; a body-size cap in the schema may refuse it first (400).
          {
            name: '10 kB password',
            url: '',
            body: { password: TEN_KB },
            ...either(bad(422, 'weak_password'), V400),
          },
        ]),
      ],
    },
    {
      method: 'POST',
      path: '/api/v1/users',
      probeUrl: USERS,
      authenticated: true,
      rows: at(USERS, [
        ...bodyRows({ email: 'hostile-new@example.com' }),
        ...lookAlikes(fx.adminEmail).map(([name, email]) => ({
          name: `email look-alike (${name})`,
          url: '',
          body: { email },
          ...V400,
        })),
        {
          name: 'the admin email, mixed case',
          url: '',
          body: { email: 'Root@GATEHOUSE.test' },
          ...bad(409, 'email_taken'),
        },
        {
          name: 'the admin email, padded',
          url: '',
          body: { email: ` ${fx.adminEmail} ` },
          ...either(bad(409, 'email_taken'), V400),
        },
        ...['superadmin', 'ADMIN', ''].map((role) => ({
          name: `role ${role}`,
          url: '',
          body: { email: 'r@example.com', role },
          ...V400,
        })),
        { name: '10 kB name', url: '', body: { email: 'n@example.com', name: TEN_KB }, ...V400 },
        {
          name: 'short password',
          url: '',
          body: { email: 'p@example.com', password: 'short' },
          ...bad(422, 'weak_password'),
        },
        UNAUTHENTICATED,
      ]),
    },
    {
      method: 'DELETE',
      path: '/api/v1/users/<id>',
      probeUrl: `${USERS}/00000000-0000-7000-8000-000000000000`,
      authenticated: true,
      rows: HOSTILE_IDS.map((id) => ({ name: `id ${id.slice(0, 40)}`, url: `${USERS}/${id}`, ...NOT_FOUND })),
    },
    {
      method: 'POST',
      path: '/api/v1/users/<id>/unlock',
      probeUrl: `${USERS}/00000000-0000-7000-8000-000000000000/unlock`,
      authenticated: true,
      rows: [
        ...HOSTILE_IDS.map((id) => ({
          name: `id ${id.slice(0, 40)}`,
          url: `${USERS}/${id}/unlock`,
          ...NOT_FOUND,
        })),
        ...at(`${USERS}/${fx.targetId}/unlock`, [
          { name: 'unknown field', url: '', body: { force: true }, ...V400 },
          { name: 'array body', url: '', body: [], ...V400 },
          { name: 'string body', url: '', body: 'unlock', ...V400 },
        ]),
      ],
    },
    {
      method: 'POST',
      path: '/api/v1/users/invite',
      probeUrl: `${USERS}/invite`,
      authenticated: true,
      rows: at(`${USERS}/invite`, [
        ...bodyRows({ email: 'invitee-hostile@example.com' }),
        ...lookAlikes(fx.adminEmail).map(([name, email]) => ({
          name: `email look-alike (${name})`,
          url: '',
          body: { email },
          ...V400,
        })),
        {
          name: 'an active user, mixed case',
          url: '',
          body: { email: 'ROOT@gatehouse.TEST' },
          ...bad(409, 'email_taken'),
        },
        ...['owner', 'ADMIN'].map((role) => ({
          name: `role ${role}`,
          url: '',
          body: { email: 'i@example.com', role },
          ...V400,
        })),
      ]),
    },
    {
      method: 'GET',
      path: '/api/v1/invite/<token>',
      probeUrl: `/api/v1/invite/${'A'.repeat(43)}`,
      authenticated: false,
      rows: HOSTILE_IDS.map((token) => ({
        name: `token ${token.slice(0, 40)}`,
        url: `/api/v1/invite/${token}`,
        ...bad(404, 'invitation_not_found', 'not_found'),
      })),
    },
    {
      method: 'POST',
      path: '/api/v1/invite/<token>/set-password',
      probeUrl: `/api/v1/invite/${'A'.repeat(43)}/set-password`,
      authenticated: false,
      rows: [
        ...HOSTILE_IDS.map((token) => ({
          name: `token ${token.slice(0, 40)}`,
          url: `/api/v1/invite/${token}/set-password`,
          body: { password: 'a perfectly good passphrase 8' },
          ...bad(404, 'invitation_not_found', 'not_found'),
        })),
        ...at(
          `/api/v1/invite/${'A'.repeat(43)}/set-password`,
          bodyRows({ password: 'a perfectly good passphrase 8' }),
        ),
      ],
    },
  ];
}
