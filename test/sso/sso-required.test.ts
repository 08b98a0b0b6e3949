import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { settleAfterAnswers } from '../../src/kernel/after-answer.ts';
import { issueResetLink } from '../../src/modules/recovery/reset-links.ts';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { idpEnv, signInThroughIdp } from '../helpers/idp.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { authHeaders, createUser, firstAdmin, sessionFor } from '../helpers/users.ts';
import { invite, setPassword, tokenOf } from '../invitations/helpers.ts';
import { caller, nextAddress, PASSWORD, registerPasskey } from '../mfa/helpers.ts';
import { codeIn, signInMail } from '../passwordless/helpers.ts';
import { authorizeAt } from '../support/oidc-browser.ts';
import { type OidcHarness, startOidcProvider } from '../support/oidc-provider.ts';
import { createSamlIdp, type SamlIdp } from '../support/saml-idp.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';

/*
 * docs/api.md §23 `sso_required`: while an organization requires single sign-on, every other way
 * in for an address at its domains answers 403 `sso_required` carrying the connection's start_url
 * (page flows land on /account/sign-in?error=sso_required), admins excepted; an address without
 * an account gets the same answer as one with; nothing is mailed, created or signed in.
 */

const SECRET = 'upstream-client-secret-of-test';
const START_URL = `${PUBLIC_URL}/api/v1/idp/acme/start`;
const callbackOf = (name: string) => `${PUBLIC_URL}/api/v1/idp/${name}/callback`;

/** The answer's status, code and start_url: what must not differ between an account and none. */
function refusal(res: LightMyRequestResponse) {
  const body = json<{ code?: string; start_url?: string; detail?: string }>(res);
  return { status: res.statusCode, code: body.code, start_url: body.start_url, detail: body.detail };
}

function cookieOf(res: LightMyRequestResponse, name: string): string {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const line = lines.find((l) => l.startsWith(`${name}=`)) ?? '';
  return line.split(';')[0]?.slice(name.length + 1) ?? '';
}

for (const dialect of DIALECTS) {
  describe(`sso: sso_required refuses every other way in at the organization's domains [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;
    let op: OidcHarness;
    let idp: SamlIdp;
    let admin: { authorization: string };
    let orgId: string;
    let bob: UserRow;
    let boss: UserRow;

    const EXPECTED = {
      status: 403,
      code: 'sso_required',
      start_url: START_URL,
      detail: 'This organization signs in with single sign-on only: continue at start_url',
    };

    const post = (url: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
      t.app.inject({ method: 'POST', url, payload, headers, remoteAddress: nextAddress() });
    const setRequired = async (on: boolean) => {
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/organizations/${orgId}`,
        headers: admin,
        payload: { sso_required: on },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json<{ sso_required: boolean }>(res).sso_required, on);
    };
    const outboxTo = async (to: string) =>
      (await t.ctx.db.selectFrom('outbox').selectAll().where('recipient', '=', to).execute()).length;
    const sessionsOf = async (id: string) =>
      (await t.ctx.db.selectFrom('sessions').select('id').where('user_id', '=', id).execute()).length;
    const usersAt = async (email: string) =>
      (await t.ctx.db.selectFrom('users').select('id').where('email', '=', email).execute()).length;

    before(async () => {
      idp = createSamlIdp('https://idp.acme.test/saml');
      op = await startOidcProvider({
        clientId: 'gatehouse',
        clientSecret: SECRET,
        redirectUris: [callbackOf('social')],
        accounts: {
          bob: { email: 'bob@acme.example', email_verified: true, name: 'Bob' },
          carl: { email: 'carl@acme.example', email_verified: true, name: 'Carl' },
        },
      });
      ({ t, smtp } = await buildMailTestApp(dialect, idpEnv(op)));
      await t.ctx.modules.set('registration', true);
      admin = await authHeaders(t, await firstAdmin(t));
      const org = await post('/api/v1/organizations', { name: 'Acme', domains: ['acme.example'] }, admin);
      assert.equal(org.statusCode, 201, org.body);
      assert.equal(json<{ sso_required: boolean }>(org).sso_required, false, 'off by default');
      orgId = json<{ id: string }>(org).id;
      const saml = await post(
        '/api/v1/idp/providers',
        {
          name: 'acme',
          kind: 'saml',
          organization_id: orgId,
          domains: ['acme.example'],
          idp_metadata_xml: idp.metadataXml,
        },
        admin,
      );
      assert.equal(saml.statusCode, 201, saml.body);
      const social = await post(
        '/api/v1/idp/providers',
        { name: 'social', issuer: op.issuer, client_id: op.clientId, client_secret: SECRET },
        admin,
      );
      assert.equal(social.statusCode, 201, social.body);
      bob = await createUser(t, { email: 'bob@acme.example', password: PASSWORD });
      boss = await createUser(t, { email: 'boss@acme.example', password: PASSWORD, role: 'admin' });
      await setRequired(true);
    });
    after(async () => {
      await t?.destroy();
      await op?.stop();
    });

    it('sso_required is an organization field, admin-only like domains, false by default', async () => {
      const got = await t.app.inject({ url: `/api/v1/organizations/${orgId}`, headers: admin });
      assert.equal(json<{ sso_required: boolean }>(got).sso_required, true);
      const member = await createUser(t, { email: 'manager@elsewhere.example' });
      await t.ctx.db
        .insertInto('organization_members')
        .values({ organization_id: orgId, user_id: member.id, joined_at: Date.now() })
        .execute();
      await t.ctx.db
        .insertInto('organization_member_roles')
        .values({ organization_id: orgId, user_id: member.id, role: 'owner' })
        .execute();
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/api/v1/organizations/${orgId}`,
        headers: await authHeaders(t, member),
        payload: { sso_required: false },
      });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(json(res).code, 'forbidden');
    });

    it('POST /login: 403 sso_required with start_url, the same for no account, a wrong and a right password', async () => {
      const right = await post('/api/v1/login', { email: 'bob@acme.example', password: PASSWORD });
      assert.deepEqual(refusal(right), EXPECTED);
      const wrong = await post('/api/v1/login', { email: 'bob@acme.example', password: 'not it at all 1' });
      assert.deepEqual(refusal(wrong), EXPECTED);
      const nobody = await post('/api/v1/login', { email: 'nobody@ACME.example', password: PASSWORD });
      assert.deepEqual(refusal(nobody), EXPECTED, 'no enumeration: an address without an account');
      assert.equal(await sessionsOf(bob.id), 0);
      const entry = await t.ctx.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'login.failure')
        .where('target_id', '=', bob.id)
        .executeTakeFirstOrThrow();
      assert.match(entry.details, /"reason":"sso_required"/);
    });

    it('the admin exception: an admin at the domain signs in with the password; a wrong one is the same 403', async () => {
      const ok = await post('/api/v1/login', { email: 'boss@acme.example', password: PASSWORD });
      assert.equal(ok.statusCode, 200, ok.body);
      const wrong = await post('/api/v1/login', { email: 'boss@acme.example', password: 'not it at all 1' });
      assert.deepEqual(refusal(wrong), EXPECTED, 'an admin address cannot be told apart by a wrong password');
    });

    it('POST /login/email: refused before any mail is sent, account or not; an admin still gets the mail', async () => {
      for (const email of ['bob@acme.example', 'ghost@acme.example']) {
        const res = await post('/api/v1/login/email', { email });
        assert.deepEqual(refusal(res), EXPECTED, email);
      }
      await settleAfterAnswers(t.ctx);
      assert.equal(await outboxTo('bob@acme.example'), 0, 'no mail to bob');
      assert.equal(await outboxTo('ghost@acme.example'), 0);
      const ok = await post('/api/v1/login/email', { email: 'boss@acme.example' });
      assert.equal(ok.statusCode, 202, ok.body);
      await settleAfterAnswers(t.ctx);
      assert.equal(await outboxTo('boss@acme.example'), 1);
    });

    it('POST /login/email/verify: a live code of an address at the domain is refused, no session', async () => {
      await setRequired(false);
      try {
        const sent = await post('/api/v1/login/email', { email: 'bob@acme.example' });
        assert.equal(sent.statusCode, 202, sent.body);
        await settleAfterAnswers(t.ctx);
      } finally {
        await setRequired(true);
      }
      const code = codeIn(await signInMail(smtp, 'bob@acme.example'));
      assert.ok(code);
      const res = await post('/api/v1/login/email/verify', { email: 'bob@acme.example', code });
      assert.deepEqual(refusal(res), EXPECTED);
      assert.equal(await sessionsOf(bob.id), 0);
    });

    it('POST /login/passkey: refused after the assertion verifies, no session', async () => {
      const pia = await createUser(t, { email: 'pia@acme.example', password: PASSWORD });
      const { credential } = await registerPasskey(t, (await sessionFor(t, pia)).access_token);
      const before = await sessionsOf(pia.id);
      const opts = await caller(t)('POST', '/api/v1/passkeys/authentication/options', {});
      const ceremony = json<{ challenge_id: string; options: { challenge: string } }>(opts);
      const response = credential.assert(
        { challenge: ceremony.options.challenge, rpId: 'gatehouse.test' },
        PUBLIC_URL,
        {
          step: 1,
        },
      );
      const res = await caller(t)('POST', '/api/v1/login/passkey', {
        challenge_id: ceremony.challenge_id,
        response,
      });
      assert.deepEqual(refusal(res), EXPECTED);
      assert.equal(await sessionsOf(pia.id), before);
    });

    it('POST /password/forgot: refused before any mail, account or not; an admin still gets the link', async () => {
      for (const email of ['bob@acme.example', 'ghost2@acme.example']) {
        const res = await post('/api/v1/password/forgot', { email });
        assert.deepEqual(refusal(res), EXPECTED, email);
      }
      await settleAfterAnswers(t.ctx);
      const resetMails = await t.ctx.db
        .selectFrom('outbox')
        .select('id')
        .where('recipient', 'in', ['bob@acme.example', 'ghost2@acme.example'])
        .where('kind', '!=', 'email_signin')
        .execute();
      assert.equal(resetMails.length, 0, 'no reset mail');
      const before = await outboxTo('boss@acme.example');
      const ok = await post('/api/v1/password/forgot', { email: 'boss@acme.example' });
      assert.equal(ok.statusCode, 202, ok.body);
      await settleAfterAnswers(t.ctx);
      assert.equal(await outboxTo('boss@acme.example'), before + 1);
    });

    it('POST /password/reset/<token>: refused before the link is used; the password stays', async () => {
      const issued = await issueResetLink(t.ctx, t.ctx.db, bob);
      const token = new URL(issued.url).pathname.split('/').pop() ?? '';
      const res = await post(`/api/v1/password/reset/${token}`, { password: 'a brand new passphrase 99' });
      assert.deepEqual(refusal(res), EXPECTED);
      const row = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('id', '=', bob.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.password_hash, bob.password_hash, 'the password did not change');
      const link = await t.ctx.db
        .selectFrom('one_time_links')
        .select('used_at')
        .where('user_id', '=', bob.id)
        .where('purpose', '=', 'password_reset')
        .executeTakeFirstOrThrow();
      assert.equal(link.used_at, null, 'the link was not used');
    });

    it('POST /invite/<token>/set-password: refused, the invitation stays usable', async () => {
      const made = await invite(t, admin, { email: 'ivan@acme.example' });
      assert.equal(made.statusCode, 201, made.body);
      const token = tokenOf(json(made));
      const res = await setPassword(t, token, 'a brand new passphrase 99');
      assert.deepEqual(refusal(res), EXPECTED);
      const view = await t.app.inject({ url: `/api/v1/invite/${token}` });
      assert.equal(view.statusCode, 200, view.body);
    });

    it('POST /signup: refused, nothing created', async () => {
      const res = await post('/api/v1/signup', {
        email: 'newbie@acme.example',
        password: 'a brand new passphrase 99',
      });
      assert.deepEqual(refusal(res), EXPECTED);
      assert.equal(await usersAt('newbie@acme.example'), 0);
    });

    it('POST /idp/verify: an ID token for an address at the domain is refused, nothing created', async () => {
      const res = await signInThroughIdp(t, op, 'carl');
      assert.deepEqual(refusal(res), EXPECTED);
      assert.equal(await usersAt('carl@acme.example'), 0);
      const linked = await signInThroughIdp(t, op, 'bob');
      assert.deepEqual(refusal(linked), EXPECTED);
      assert.equal(await sessionsOf(bob.id), 0);
    });

    it("another provider's callback lands on /account/sign-in?error=sso_required", async () => {
      const start = await t.app.inject({ url: '/api/v1/idp/social/start' });
      assert.equal(start.statusCode, 302, start.body);
      const back = await authorizeAt(String(start.headers.location), 'carl', callbackOf('social'));
      const res = await t.app.inject({
        url: `${back.pathname}${back.search}`,
        headers: { cookie: `gatehouse_idp_flow=${cookieOf(start, 'gatehouse_idp_flow')}` },
      });
      assert.equal(res.statusCode, 302, res.body);
      assert.equal(res.headers.location, '/account/sign-in?error=sso_required');
      assert.equal(await usersAt('carl@acme.example'), 0);
    });

    it("the organization's own connection signs in (SAML)", async () => {
      const spMetadata = (await t.app.inject({ url: '/saml/acme/metadata' })).body;
      const start = await t.app.inject({ url: '/api/v1/idp/acme/start' });
      const answer = await idp.respond(spMetadata, {
        location: String(start.headers.location),
        user: { nameId: 'bob@acme.example' },
      });
      const res = await t.app.inject({
        method: 'POST',
        url: '/saml/acme/acs',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: `gatehouse_saml_flow=${cookieOf(start, 'gatehouse_saml_flow')}`,
        },
        payload: new URLSearchParams({
          SAMLResponse: answer.SAMLResponse,
          RelayState: answer.RelayState ?? '',
        }).toString(),
      });
      assert.equal(res.statusCode, 200, `${res.statusCode} ${res.headers.location}`);
      assert.equal(await sessionsOf(bob.id), 1);
    });

    it('off again (or sso off): the password signs in', async () => {
      await t.ctx.modules.set('sso', false);
      try {
        const res = await post('/api/v1/login', { email: 'bob@acme.example', password: PASSWORD });
        assert.equal(res.statusCode, 200, res.body);
      } finally {
        await t.ctx.modules.set('sso', true);
      }
      await setRequired(false);
      const res = await post('/api/v1/login', { email: 'bob@acme.example', password: PASSWORD });
      assert.equal(res.statusCode, 200, res.body);
      await setRequired(true);
      void boss;
    });
  });
}
