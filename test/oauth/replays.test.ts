import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { DIALECTS } from '../helpers/databases.ts';
import { type CodeFlow, startCodeFlow } from './code-flow.ts';

/*
 * concurrent-replay-of-a-code-or-refresh-token: the library reads a code or refresh token, checks it
 * unused, then marks it used, so two requests presenting it at once both passed the check and both
 * got tokens (with group commit on SQLite nearly always, on PostgreSQL too). Marking it used is
 * atomic now: exactly one request wins, and the other is a reuse — the grant ends
 * (docs/api.md §17: "presenting a rotated one revokes the grant").
 */

const invalidGrant = (result: PromiseSettledResult<unknown>) =>
  result.status === 'rejected' && (result.reason as oidc.ResponseBodyError).error === 'invalid_grant';

for (const dialect of DIALECTS) {
  describe(`a code or refresh token presented twice at once (${dialect})`, () => {
    let f: CodeFlow;
    before(async () => {
      f = await startCodeFlow(dialect);
    });
    after(() => f?.close());

    it('a refresh token: one request wins, the other is refused, and the grant ends', async () => {
      for (let round = 0; round < 5; round += 1) {
        const tokens = await f.signIn(await f.person());
        const refresh = String(tokens.refresh_token);
        const both = await Promise.allSettled([
          oidc.refreshTokenGrant(f.config, refresh),
          oidc.refreshTokenGrant(f.config, refresh),
        ]);
        const won = both.filter((r) => r.status === 'fulfilled');
        assert.equal(won.length, 1, `exactly one refresh succeeds (round ${round})`);
        assert.ok(both.some(invalidGrant), 'the other answers invalid_grant');
        const winner = (won[0] as PromiseFulfilledResult<oidc.TokenEndpointResponse>).value;
        await assert.rejects(oidc.refreshTokenGrant(f.config, String(winner.refresh_token)), {
          error: 'invalid_grant',
        });
        assert.equal(await f.active(winner.access_token), false, "the winner's tokens end with the grant");
      }
    });

    it('an authorization code: one exchange wins, the other is refused, and the grant ends', async () => {
      for (let round = 0; round < 5; round += 1) {
        const p = await f.person();
        const { callback, verifier, state } = await f.authorize(p);
        const exchange = () =>
          oidc.authorizationCodeGrant(f.config, callback, {
            pkceCodeVerifier: verifier,
            expectedState: state,
          });
        const both = await Promise.allSettled([exchange(), exchange()]);
        const won = both.filter((r) => r.status === 'fulfilled');
        assert.equal(won.length, 1, `exactly one exchange succeeds (round ${round})`);
        assert.ok(both.some(invalidGrant), 'the other answers invalid_grant');
        const winner = (won[0] as PromiseFulfilledResult<oidc.TokenEndpointResponse>).value;
        assert.equal(await f.active(winner.access_token), false, "the winner's tokens end with the grant");
      }
    });
  });
}
