import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type CodeFlow, startCodeFlow } from './code-flow.ts';

/*
 * refused-refresh-spends-the-token: a refresh asking for a `resource` the client may not have
 * answered invalid_target, but the library had already used (rotated) the refresh token, so the
 * client's next, correct refresh counted as a reuse and ended the grant. The resource is checked
 * before the token is used now: the refused refresh leaves it as it was (docs/api.md §17: a refresh
 * token is spent by a refresh that succeeds, and only a rotated one presented again ends the grant).
 */

const NOTES = 'https://notes.example.test/';
const CALENDAR = 'https://calendar.example.test/';
const UNKNOWN = 'https://unknown.example.test/';

for (const dialect of DIALECTS) {
  describe(`a refused refresh keeps the refresh token (${dialect})`, () => {
    let f: CodeFlow;
    let config: oidc.Configuration;
    before(async () => {
      f = await startCodeFlow(dialect);
      for (const [identifier, scope] of [
        [NOTES, 'read:notes'],
        [CALENDAR, 'read:calendar'],
      ] as const) {
        const made = await f.s.admin('POST', '/api/v1/resources', {
          identifier,
          name: identifier,
          scopes: [{ name: scope, description: scope }],
        });
        assert.equal(made.status, 201, JSON.stringify(made.body));
      }
      ({ config } = await f.client('Notes with an API', {
        first_party: true,
        scopes: ['openid', 'email', 'read:notes', 'read:calendar'],
        resources: [NOTES, CALENDAR],
      }));
    });
    after(() => f?.close());

    const refused = (error: string) => (err: oidc.ResponseBodyError) => {
      assert.equal(err.error, error);
      return true;
    };

    for (const [what, resource, error] of [
      ['an API no client may have (unknown)', UNKNOWN, 'invalid_target'],
      ['an API this client may have but the grant does not hold', CALENDAR, 'invalid_target'],
    ] as const) {
      it(`a refresh for ${what} answers ${error}, then the correct refresh still works`, async () => {
        const p = await f.person();
        const tokens = await f.signIn(p, { scope: 'openid read:notes', resource: NOTES }, config);
        const refresh = String(tokens.refresh_token);
        await assert.rejects(oidc.refreshTokenGrant(config, refresh, { resource }), refused(error));
        const next = await oidc.refreshTokenGrant(config, refresh, { resource: NOTES });
        assert.equal(next.scope, 'read:notes');
        assert.notEqual(next.refresh_token, refresh, 'it rotated');
        // The grant lives on: the new refresh token works, the spent one is a reuse.
        const third = await oidc.refreshTokenGrant(config, String(next.refresh_token));
        assert.ok(third.access_token);
        await assert.rejects(oidc.refreshTokenGrant(config, refresh), refused('invalid_grant'));
      });
    }

    it('a refresh asking for a scope the API does not give this client answers invalid_scope, and keeps the token', async () => {
      const p = await f.person();
      const tokens = await f.signIn(p, { scope: 'openid read:notes', resource: NOTES }, config);
      const refresh = String(tokens.refresh_token);
      await assert.rejects(
        oidc.refreshTokenGrant(config, refresh, { resource: NOTES, scope: 'read:notes write:notes' }),
        refused('invalid_scope'),
      );
      const next = await oidc.refreshTokenGrant(config, refresh, { resource: NOTES });
      assert.equal(next.scope, 'read:notes');
    });
  });
}
