import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { toApiError } from '../../src/http/errors.ts';
import { recordAudit } from '../../src/identity/index.ts';
import { openDatabase } from '../../src/platform/db/database.ts';
import { readOperations } from '../fuzz/openapi-fuzz.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { createTestDatabase, DIALECTS } from '../helpers/databases.ts';
import { domainState, endpointMissing, problemMismatch } from '../helpers/hardening.ts';
import { idpEnv } from '../helpers/idp.ts';
import { createUser, firstAdmin, sessionFor } from '../helpers/users.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';
import { type Fixtures, hostileEndpoints } from './hostile-endpoints.ts';
import type { HostileRow } from './hostile-rows.ts';

/*
 * The hostile-input matrix (every bad input gets a clear problem+json error): every endpoint with a body, query or path parameter gets
 * malformed JSON, wrong types, missing and extra fields, empty and 10 kB strings, deep nesting, NUL,
 * RTL, zero-width and emoji characters, look-alike emails, prototype-poisoning keys, bad limits,
 * tampered cursors, hostile ids. Each must get its 4xx problem (code from docs/api.md §9, no internals)
 * and leave the stored state exactly as it was.
 */
for (const dialect of DIALECTS) {
  describe(`hostile input [${dialect}]`, () => {
    let t: TestApp;
    let op: OidcHarness;
    let fx: Fixtures;
    let adminId = '';

    before(async () => {
      op = await startOidcProvider();
      // The per-address login budget is lifted: refused look-alike logins are many, and each row
      // comes from its own address anyway, so no row sees another's throttling.
      t = await buildTestApp(dialect, {
        env: { ...idpEnv(op), LOGIN_FAILURES_PER_ADDRESS_PER_MIN: '100000' },
      });
      await t.ctx.modules.set('audit', true);
      await t.ctx.modules.set('invitations', true);
      for (const name of [
        'recovery',
        'email',
        'registration',
        'mfa',
        'passkeys',
        'sessions',
        'passwordless',
      ] as const) {
        await t.ctx.modules.set(name, true);
      }
      const admin = await firstAdmin(t);
      adminId = admin.id;
      const target = await createUser(t, { email: 'target@example.com', name: 'Target' });
      for (let i = 0; i < 3; i++) {
        await recordAudit(t.ctx.db, { action: 'module.toggle', actor: { type: 'system' } });
      }
      const auditPage = await t.app.inject({
        url: '/api/v1/admin/audit?limit=1',
        headers: await adminHeaders(),
      });
      const usersPage = await t.app.inject({ url: '/api/v1/users?limit=1', headers: await adminHeaders() });
      const session = await sessionFor(t, admin);
      fx = {
        adminId,
        adminEmail: ADMIN_EMAIL,
        adminPassword: ADMIN_PASSWORD,
        targetId: target.id,
        refreshToken: session.refresh_token,
        auditCursor: String(json<{ next_cursor: string }>(auditPage).next_cursor),
        usersCursor:
          usersPage.statusCode === 200
            ? String(json<{ next_cursor: string | null }>(usersPage).next_cursor)
            : 'MTc5NTI0MDUyMzcwMw',
        accessToken: session.access_token,
      };
      assert.match(fx.auditCursor, /^[A-Za-z0-9_-]+$/);
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    /** A fresh admin session per request: rows that end sessions must not starve the others. */
    async function adminHeaders(): Promise<Record<string, string>> {
      const admin = await firstAdmin(t);
      return { authorization: `Bearer ${(await sessionFor(t, admin)).access_token}` };
    }

    async function send(row: HostileRow, method: string, base: Record<string, string>, address: string) {
      const headers = { ...base };
      let payload: string | undefined;
      if (row.raw !== undefined) payload = row.raw;
      else if (row.body !== undefined) payload = JSON.stringify(row.body);
      if (payload !== undefined) headers['content-type'] = row.contentType ?? 'application/json';
      return t.app.inject({
        method: method as 'GET',
        url: row.url,
        headers,
        remoteAddress: address,
        ...(payload !== undefined ? { payload } : {}),
      });
    }

    // One test per endpoint, its rows checked in turn; every failing row is reported, not just the first.
    const names = hostileEndpoints({
      adminId: '',
      adminEmail: ADMIN_EMAIL,
      adminPassword: ADMIN_PASSWORD,
      targetId: '',
      refreshToken: 'x',
      auditCursor: 'x',
      usersCursor: 'x',
      accessToken: 'x',
    }).map((e) => `${e.method} ${e.path}`);

    // The matrix is a hand-written table: this keeps it from falling behind the declarations.
    it('covers every declared endpoint that takes a body, query or path parameter', async () => {
      const missing = (await readOperations(t.app))
        .filter((op) => op.body !== null || op.parameters.length > 0)
        .map((op) => `${op.method} ${op.path.replace(/\{(\w+)\}/g, '<$1>')}`)
        .filter((name) => !names.includes(name));
      assert.deepEqual(missing, []);
    });

    names.forEach((title, index) => {
      it(title, async () => {
        const endpoint = hostileEndpoints(fx)[index];
        assert.ok(endpoint);
        // Every endpoint of the matrix must exist: a missing one is a failure, never a skip.
        const headers = endpoint.authenticated ? await adminHeaders() : {};
        assert.equal(await endpointMissing(t, endpoint.method, endpoint.probeUrl, headers), false, title);
        const failures: string[] = [];
        // One admin session and one snapshot serve every row: a refused row changes neither. A row
        // that changed something is reported, and the next starts from a fresh session and snapshot.
        let auth = endpoint.authenticated ? await adminHeaders() : {};
        let state = await domainState(t);
        for (const [i, row] of endpoint.rows.entries()) {
          const address = `10.${index}.${Math.floor(i / 250)}.${(i % 250) + 1}`;
          const res = await send(row, endpoint.method, row.anonymous ? {} : auth, address);
          const mismatches = row.expect.map((e) => problemMismatch(res, e.status, [e.code]));
          if (!mismatches.includes(null)) failures.push(`${row.name}: ${mismatches[0]}`);
          const after = await domainState(t);
          if (after !== state) {
            failures.push(`${row.name}: the stored state changed`);
            if (endpoint.authenticated) auth = await adminHeaders();
            state = await domainState(t);
          }
        }
        assert.deepEqual(failures, [], `${failures.length} of ${endpoint.rows.length} rows failed`);
        assert.ok(endpoint.rows.length >= 5);
      });
    });
  });
}

describe('input characters PostgreSQL cannot store', { skip: !DIALECTS.includes('postgres') }, () => {
  it('a driver refusal of a NUL character is the request’s 400, not a 500', async () => {
    const database = await createTestDatabase('postgres');
    const { db, close } = openDatabase(database.url);
    try {
      const err = await sql`select ${'a\u0000b'}::text as v`.execute(db).then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(err instanceof Error, 'PostgreSQL refused the NUL character');
      const mapped = toApiError(err);
      assert.equal(mapped.code, 'validation_failed');
      assert.equal(mapped.status, 400);
    } finally {
      await close();
      await database.drop();
    }
  });
});
