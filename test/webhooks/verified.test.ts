import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { idpEnv, signInThroughIdp } from '../helpers/idp.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { createUser } from '../helpers/users.ts';
import { codeIn, requestSignIn, signInMail, verifyCode } from '../passwordless/helpers.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';
import { adminHeaders, createEndpoint, WEBHOOK_ENV } from './helpers.ts';
import { type Receiver, startReceiver } from './receiver.ts';

/**
 * docs/api.md §19 `email.verified` on every path that verifies an address, not only the
 * verification link: a sign-in by e-mail proves the mailbox (§20), and a provider vouching for the
 * account's own address verifies it (§16). These paths flipped the flag and emitted nothing.
 */
for (const dialect of DIALECTS) {
  describe(`email.verified from sign-in by e-mail and from a provider [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;
    let op: OidcHarness;
    let rx: Receiver;

    const verifiedEvents = (email: string) =>
      rx.received.filter(
        (r) =>
          r.type === 'email.verified' && (r.body.data as { user: { email: string } }).user.email === email,
      );
    const outboxCount = async (email: string) =>
      (
        await t.ctx.db
          .selectFrom('webhook_events')
          .select('payload')
          .where('type', '=', 'email.verified')
          .execute()
      )
        .map((r) => JSON.parse(r.payload) as { data: { user: { email: string } } })
        .filter((e) => e.data.user.email === email).length;
    const unverified = (id: string) =>
      t.ctx.db.updateTable('users').set({ email_verified: 0 }).where('id', '=', id).execute();

    before(async () => {
      rx = await startReceiver();
      op = await startOidcProvider();
      ({ t, smtp } = await buildMailTestApp(dialect, { ...WEBHOOK_ENV, ...idpEnv(op) }));
      const hook = await createEndpoint(t, await adminHeaders(t), rx.url, ['email.verified']);
      rx.secrets = [hook.secret];
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
      await rx?.close();
    });

    it('a sign-in by e-mail code that proves the mailbox emits email.verified once', async () => {
      const user = await createUser(t, { email: 'mailbox@example.com' });
      await unverified(user.id);
      assert.equal((await requestSignIn(t, user.email)).statusCode, 202);
      const ok = await verifyCode(t, user.email, codeIn(await signInMail(smtp, user.email)));
      assert.equal(ok.statusCode, 200, ok.body);
      await rx.waitFor(() => verifiedEvents(user.email).length === 1);
      const [event] = verifiedEvents(user.email);
      assert.ok(event);
      assert.deepEqual(event.verifiedBy, [0], 'standardwebhooks verifies the delivery');
      assert.deepEqual((event.body.data as { actor: unknown }).actor, { type: 'user', id: user.id });
      // Signing in again by e-mail proves nothing new: no second event.
      assert.equal((await requestSignIn(t, user.email)).statusCode, 202);
      const again = await verifyCode(t, user.email, codeIn(await signInMail(smtp, user.email, 2)));
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(await outboxCount(user.email), 1);
    });

    it('a provider vouching for the address of an account it links to emits email.verified once', async () => {
      // Made by an admin (the operator vouches), so linking by e-mail is allowed while unverified:
      // the first sign-in links by address, later ones find the linked identity (both paths).
      const user = await createUser(t, { email: 'alice@example.com' });
      await unverified(user.id);
      const first = await signInThroughIdp(t, op, 'alice');
      assert.equal(first.statusCode, 200, first.body);
      await rx.waitFor(() => verifiedEvents(user.email).length === 1);
      const [event] = verifiedEvents(user.email);
      assert.ok(event);
      assert.deepEqual(event.verifiedBy, [0], 'standardwebhooks verifies the delivery');
      assert.equal((event.body.data as { user: { email_verified: boolean } }).user.email_verified, true);
      // The linked identity signs in again: the address is verified already, nothing is emitted.
      assert.equal((await signInThroughIdp(t, op, 'alice')).statusCode, 200);
      assert.equal(await outboxCount(user.email), 1);
      // An address unverified since (an admin's address change would do it): the linked identity
      // verifies it again, and that is a second event.
      await unverified(user.id);
      assert.equal((await signInThroughIdp(t, op, 'alice')).statusCode, 200);
      await rx.waitFor(() => verifiedEvents(user.email).length === 2);
      assert.equal(await outboxCount(user.email), 2);
    });
  });
}
