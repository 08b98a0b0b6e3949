import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';
import { nextAddress } from '../mfa/helpers.ts';
import { post } from '../recovery/helpers.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';
import {
  type Armed,
  armUser,
  finishMfa,
  LINK_KINDS,
  type LinkKind,
  NEW_PASSWORD,
  openLink,
  PASSWORD,
  useLink,
  useSignIn,
} from './credential-events-support.ts';

/*
 * docs/api.md §16, "Credential events end every outstanding link": each credential event ends, in
 * its own transaction, every live password_reset, email_verify and email_change link of the user
 * and every outstanding mfa_token. One row per event; each arms a fresh user with all of them, makes
 * the event through its real entry point, then tries every one: 410 `link_invalid` on opening and on
 * using a link, 401 `mfa_token_invalid` for the mfa_token even with a good recovery code.
 */

interface Env {
  t: TestApp;
  admin: { authorization: string };
}

interface CredentialEvent {
  name: string;
  /** The link the event itself uses up (not tried afterwards). */
  consumes?: LinkKind;
  /** The address the event itself gives the account, when it sets one. */
  address?(armed: Armed): string;
  run(env: Env, armed: Armed): Promise<void>;
}

function ok(res: LightMyRequestResponse, status: number) {
  assert.equal(res.statusCode, status, res.body);
}

const EVENTS: CredentialEvent[] = [
  {
    name: 'password reset',
    consumes: 'password_reset',
    async run({ t }, a) {
      const body = { password: NEW_PASSWORD, mfa_code: a.recoveryCodes[0] };
      ok(await post(t, `/api/v1/password/reset/${a.links.password_reset}`, body, {}, nextAddress()), 200);
    },
  },
  {
    name: 'password change',
    async run({ t }, a) {
      const res = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/change-password',
        remoteAddress: nextAddress(),
        headers: { authorization: `Bearer ${a.access}` },
        payload: { current_password: PASSWORD, new_password: NEW_PASSWORD },
      });
      ok(res, 200);
    },
  },
  {
    name: 'global logout',
    async run({ t }, a) {
      const headers = { authorization: `Bearer ${a.access}` };
      ok(await post(t, '/api/v1/logout', { scope: 'global' }, headers, nextAddress()), 204);
    },
  },
  {
    name: "admin's password set",
    async run({ t, admin }, a) {
      const res = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/users/${a.user.id}`,
        headers: admin,
        payload: { password: NEW_PASSWORD },
      });
      ok(res, 200);
    },
  },
  {
    // Re-enabled afterwards: a disabled account's links are refused anyway; the hole would be that
    // they come back to life with the account.
    name: 'disable (then enable again)',
    async run({ t, admin }, a) {
      for (const status of ['disabled', 'active']) {
        const url = `/api/v1/users/${a.user.id}`;
        ok(await t.app.inject({ method: 'PUT', url, headers: admin, payload: { status } }), 200);
      }
    },
  },
  {
    // Beyond the list of §16: an address the admin set is the account's address; a pending change
    // link asked for before must not move the account elsewhere afterwards.
    name: "admin's address change",
    address: (a) => `moved-${a.user.email}`,
    async run({ t, admin }, a) {
      const url = `/api/v1/users/${a.user.id}`;
      const payload = { email: `moved-${a.user.email}` };
      ok(await t.app.inject({ method: 'PUT', url, headers: admin, payload }), 200);
    },
  },
  {
    name: "admin's second-factor reset",
    async run({ t, admin }, a) {
      ok(
        await t.app.inject({ method: 'DELETE', url: `/api/v1/users/${a.user.id}/mfa`, headers: admin }),
        204,
      );
    },
  },
  {
    name: 'completed e-mail change',
    consumes: 'email_change',
    async run({ t }, a) {
      ok(await post(t, `/api/v1/email/verify/${a.links.email_change}`, undefined, {}, nextAddress()), 200);
    },
  },
  {
    // The operator's way back in (docs/operations.md): sets a password on an existing account.
    name: "operator's password set (gatehouse create-admin on an existing account)",
    async run({ t }, a) {
      const result = await runCli(['create-admin', '--email', a.user.email], t.databaseUrl, {
        ADMIN_PASSWORD: NEW_PASSWORD,
      });
      assert.equal(result.code, 0, result.stderr);
    },
  },
];

for (const dialect of DIALECTS) {
  describe(`credential events end every outstanding link (docs/api.md §16) [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;
    let env: Env;
    let bystander: Armed;

    before(async () => {
      ({ t, smtp } = await buildMailTestApp(dialect));
      env = { t, admin: await authHeaders(t, await firstAdmin(t)) };
      bystander = await armUser(t, smtp, 'bystander');
    });
    after(() => t.destroy());

    EVENTS.forEach((event, i) => {
      it(`credential-event-leaves-links-live: ${event.name} — afterwards every link and the mfa_token are dead`, async () => {
        const armed = await armUser(t, smtp, `event${i}`);
        await event.run(env, armed);
        for (const kind of LINK_KINDS.filter((k) => k !== event.consumes)) {
          const token = armed.links[kind];
          const dead = { status: 410, code: 'link_invalid' };
          assert.deepEqual(await openLink(t, kind, token), dead, `opening the ${kind} link`);
          assert.deepEqual(await useLink(t, kind, token), dead, `using the ${kind} link`);
        }
        // docs/api.md §16 and §20: the e-mail sign-in pair ends too — both halves.
        const refused = { status: 401, code: 'invalid_credentials' };
        const signInCode = { email: armed.user.email, code: armed.signIn.code };
        assert.deepEqual(await useSignIn(t, signInCode), refused, 'the sign-in code');
        assert.deepEqual(await useSignIn(t, { token: armed.signIn.token }), refused, 'the sign-in link');
        const code = armed.recoveryCodes[1] ?? '';
        assert.deepEqual(await finishMfa(t, armed.mfaToken, code), {
          status: 401,
          code: 'mfa_token_invalid',
        });
        // Nothing was used by the dead links: the account kept its address.
        const row = await t.ctx.db
          .selectFrom('users')
          .select('email')
          .where('id', '=', armed.user.id)
          .executeTakeFirstOrThrow();
        const address =
          event.address?.(armed) ?? (event.consumes === 'email_change' ? armed.newEmail : armed.user.email);
        assert.equal(row.email, address);
      });
    });

    it("another user's links and mfa_token live through all those events", async () => {
      for (const kind of LINK_KINDS) {
        assert.deepEqual(await openLink(t, kind, bystander.links[kind]), { status: 200, code: null }, kind);
      }
      // The bystander's sign-in link still works (its account has TOTP: the answer asks for it).
      const pair = await useSignIn(t, { token: bystander.signIn.token });
      assert.deepEqual(pair, { status: 403, code: 'mfa_required' });
      const done = await finishMfa(t, bystander.mfaToken, bystander.recoveryCodes[0] ?? '');
      assert.deepEqual(done, { status: 200, code: null });
    });
  });
}
