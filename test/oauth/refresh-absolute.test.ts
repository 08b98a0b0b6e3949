import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type CodeFlow, startCodeFlow } from './code-flow.ts';

/*
 * oauth-refresh-slides-forever: OWASP ASVS 5.0 10.4.8 (refresh tokens have an absolute expiration,
 * sliding or not). Each OAuth refresh rotates the token with a fresh REFRESH_TOKEN_TTL_S, so the
 * absolute end is the grant's Gatehouse session (docs/oauth.md, "A grant is a session": it lives
 * REFRESH_TOKEN_TTL_S, or SESSION_MAX_LIFETIME_S when shorter) — held by reading the adapter only,
 * for Gatehouse's own refresh tokens test/hardening/session-lifetime.test.ts pins it. Now: the
 * session's end is fixed at the sign-in and no refresh moves it; once it is reached (the row's end
 * moved into the past, no waiting) the latest refresh token is invalid_grant and inactive.
 */

for (const dialect of DIALECTS) {
  describe(`oauth refresh tokens end with their grant's session (${dialect})`, () => {
    let f: CodeFlow;
    before(async () => {
      f = await startCodeFlow(dialect);
    });
    after(() => f?.close());

    const sessionRow = async (id: string) =>
      f.s.t.ctx.db
        .selectFrom('sessions')
        .select(['created_at', 'expires_at'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();

    it('rotation never moves the end; past it the refresh token is refused', async () => {
      const p = await f.person();
      const first = await f.signIn(p);
      const grant = await f.appSession(p.access);
      assert.ok(grant, 'the grant is a session');
      const at = await sessionRow(grant.id);
      const end = Number(at.expires_at);
      const { refreshTokenTtlS, sessionMaxLifetimeS } = f.s.t.ctx.config;
      assert.equal(end - Number(at.created_at), Math.min(refreshTokenTtlS, sessionMaxLifetimeS) * 1000);
      let refresh = String(first.refresh_token);
      for (let i = 0; i < 3; i += 1) {
        refresh = String((await oidc.refreshTokenGrant(f.config, refresh)).refresh_token);
        assert.equal(
          Number((await sessionRow(grant.id)).expires_at),
          end,
          'a refresh does not slide the end',
        );
      }
      // Each rotated token itself gets a full REFRESH_TOKEN_TTL_S (it slides): the session caps it.
      const info = await oidc.tokenIntrospection(f.config, refresh);
      assert.equal(info.active, true);
      assert.equal(Number(info.exp) - Number(info.iat), refreshTokenTtlS);
      // The end reached.
      await f.s.t.ctx.db
        .updateTable('sessions')
        .set({ expires_at: Date.now() - 1000 })
        .where('id', '=', grant.id)
        .execute();
      assert.equal(await f.active(refresh), false);
      await assert.rejects(oidc.refreshTokenGrant(f.config, refresh), (err: oidc.ResponseBodyError) => {
        assert.equal(err.error, 'invalid_grant');
        return true;
      });
    });
  });
}
