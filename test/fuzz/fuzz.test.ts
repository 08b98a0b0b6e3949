import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { firstAdmin, sessionFor } from '../helpers/users.ts';
import { fuzzApp } from './openapi-fuzz.ts';

// Bounded for `npm test`; `npm run fuzz` runs the same property far longer (FUZZ_RUNS).
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);

for (const dialect of DIALECTS) {
  describe(`OpenAPI fuzzing [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      // Form A with invitations on too, so every module's endpoints are fuzzed.
      t = await buildTestApp(dialect);
      await t.ctx.modules.set('invitations', true);
    });
    after(() => t.destroy());

    it('no 5xx, every error is problem+json with a known code, every 2xx matches its schema', async () => {
      const admin = await firstAdmin(t);
      // A fresh admin session per request: fuzzed logouts must not starve later requests of a token.
      const authHeader = async () => `Bearer ${(await sessionFor(t, admin)).access_token}`;
      const { requests, operations } = await fuzzApp(t.app, authHeader, {
        runsPerOperation: RUNS,
        // Disabling modules mid-run would only turn later requests into module_disabled 404s.
        skip: (op) => op.operationId === 'admin.module_toggle',
      });
      assert.ok(operations >= 5, `fuzzed ${operations} operations`);
      assert.ok(requests >= operations * RUNS);
    });
  });
}
