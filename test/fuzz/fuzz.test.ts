import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { normalizeEmail } from '../../src/identity/index.ts';
import { loadModules } from '../../src/kernel/registry.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, firstAdmin, sessionFor } from '../helpers/users.ts';
import { type Caller, fuzzApp } from './openapi-fuzz.ts';

// Bounded for `npm test`; `npm run fuzz` runs the same property far longer (FUZZ_RUNS).
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const REQUIRED_MODULES = ['core', 'health', 'admin', 'auth', 'users'] as const;

for (const dialect of DIALECTS) {
  describe(`OpenAPI fuzzing [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      // Form A with invitations and audit on too, so every module's endpoints are fuzzed.
      t = await buildTestApp(dialect);
      await t.ctx.modules.set('invitations', true);
      await t.ctx.modules.set('audit', true);
    });
    after(() => t.destroy());

    /**
     * What no accepted mutation may break: an active admin remains, stored emails are normalized
     * and unique, passwords are stored only as hashes and refresh tokens only as digests, required
     * modules stay on, and an ordinary user's own request never made them an admin.
     */
    async function invariants(caller: Caller, userId: string | null): Promise<string | null> {
      const users = await t.ctx.db
        .selectFrom('users')
        .select(['id', 'email', 'role', 'status', 'password_hash'])
        .execute();
      if (!users.some((u) => u.role === 'admin' && u.status === 'active')) return 'no active admin is left';
      if (new Set(users.map((u) => u.email)).size !== users.length) return 'two users share an email';
      for (const u of users) {
        if (normalizeEmail(u.email) !== u.email)
          return `a stored email is not normalized: ${JSON.stringify(u.email)}`;
        if (u.password_hash !== null && !u.password_hash.startsWith('$'))
          return 'a password is stored unhashed';
      }
      if (caller === 'user' && users.find((u) => u.id === userId)?.role !== 'user') {
        return "an ordinary user's request changed their role";
      }
      const tokens = await t.ctx.db.selectFrom('refresh_tokens').select('token_hash').execute();
      if (tokens.some((r) => !/^[A-Za-z0-9_-]{43}$/.test(r.token_hash)))
        return 'a refresh token is stored as is';
      for (const name of REQUIRED_MODULES) if (!t.ctx.modules.isEnabled(name)) return `${name} was disabled`;
      return null;
    }

    it('no 5xx, problem+json with known codes, 2xx matching schemas and access levels, invariants kept', async () => {
      const admin = await firstAdmin(t);
      const access = new Map(
        loadModules(t.ctx).flatMap((m) =>
          m.endpoints.map((e) => [`${e.group}.${e.label}`, e.access] as const),
        ),
      );
      let lastUserId: string | null = null;
      // A fresh session per request (fuzzed logouts must not starve later requests of a token); for
      // an ordinary user, a fresh user too, so an admin's fuzzed role change never masks theirs.
      const authHeader = async (caller: Exclude<Caller, 'none'>) => {
        if (caller === 'admin') return `Bearer ${(await sessionFor(t, admin)).access_token}`;
        const user = await createUser(t);
        lastUserId = user.id;
        return `Bearer ${(await sessionFor(t, user)).access_token}`;
      };
      const { requests, operations } = await fuzzApp(t.app, authHeader, {
        runsPerOperation: RUNS,
        // Disabling modules mid-run would only turn later requests into module_disabled 404s.
        skip: (op) => op.operationId === 'admin.module_toggle',
        access,
        invariants: (caller) => invariants(caller, lastUserId),
      });
      assert.ok(operations >= 5, `fuzzed ${operations} operations`);
      assert.ok(requests >= operations * RUNS);
      assert.equal(await invariants('admin', null), null);
    });
  });
}
