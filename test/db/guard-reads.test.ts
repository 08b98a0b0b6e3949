import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { findSessionWithUser, revokeSession } from '../../src/identity/index.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { createUser, sessionFor } from '../helpers/users.ts';

// The guard's one read (src/identity/sessions.queries.ts) never sees another request's
// uncommitted writes.
for (const dialect of DIALECTS) {
  describe(`guard session reads [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('finds the session with its user, and nothing for an unknown session', async () => {
      const user = await createUser(t);
      const claims = await t.ctx.accessTokens.verify((await sessionFor(t, user)).access_token);
      const found = await findSessionWithUser(t.ctx.db, claims.sid);
      assert.equal(found?.session.id, claims.sid);
      assert.equal(found?.user.id, user.id);
      assert.equal(found?.user.email, user.email);
      assert.equal(await findSessionWithUser(t.ctx.db, 'no-such-session'), null);
    });

    it('does not read a revocation that another transaction has not committed (and then rolls back)', async () => {
      const user = await createUser(t);
      const claims = await t.ctx.accessTokens.verify((await sessionFor(t, user)).access_token);
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let revokedInside = false;
      const rollback = t.ctx.db
        .transaction()
        .execute(async (trx) => {
          await revokeSession(trx, claims.sid, 'test');
          revokedInside = true;
          await held;
          throw new Error('roll back');
        })
        .catch(() => {});
      while (!revokedInside) await tick();
      let read: Awaited<ReturnType<typeof findSessionWithUser>> | undefined;
      const reading = findSessionWithUser(t.ctx.db, claims.sid).then((r) => {
        read = r;
      });
      for (let i = 0; i < 5; i++) await tick();
      if (dialect === 'sqlite') assert.equal(read, undefined, 'the read waits for the transaction');
      release();
      await rollback;
      await reading;
      assert.equal(read?.session.revoked_at, null);
    });
  });
}
