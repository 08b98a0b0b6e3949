import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { authHeaders, createUser } from '../helpers/users.ts';
import { addMember, createOrganization, memberRoles, tokenOfUrl } from './invitations-helpers.ts';

// API §21: showing and accepting an invitation to an organization. Signed in with the invited
// address: the membership; no account yet: the account, made through the sign-in pipeline; every
// refusal (another account, an existing account without signing in, a weak password, unknown,
// expired, used) stores nothing; single use under concurrency.

type Org = { id: string; name: string; slug: string };
const PASSWORD = 'purple elephant juggles seventeen oranges';

for (const dialect of DIALECTS) {
  describe(`organization invitations: show and accept [${dialect}]`, () => {
    let t: TestApp;
    let admin: Record<string, string>;
    let org: Org;

    const inviteToken = async (email: string, roles: string[] = ['member']) => {
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/v1/organizations/${org.id}/invitations`,
        headers: admin,
        payload: { email, roles },
      });
      assert.equal(res.statusCode, 201, res.body);
      return tokenOfUrl(json<{ invite_url: string }>(res).invite_url);
    };
    const show = (token: string) => t.app.inject({ url: `/api/v1/organization-invitations/${token}` });
    const accept = (token: string, payload?: unknown, headers: Record<string, string> = {}) =>
      t.app.inject({
        method: 'POST',
        url: `/api/v1/organization-invitations/${token}/accept`,
        headers,
        ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      });
    const userByEmail = (email: string) =>
      t.ctx.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
    const statusOf = async (token: string) => {
      const res = await show(token);
      return res.statusCode === 200 ? 'pending' : json(res).code;
    };

    before(async () => {
      ({ t } = await buildMailTestApp(dialect));
      admin = await authHeaders(t, await createUser(t, { role: 'admin' }));
      org = await createOrganization(t, { name: 'Acme Corp' });
    });
    after(() => t.destroy());

    it('shows the organization, the address, the roles and whether the account exists (no auth, reads only)', async () => {
      const token = await inviteToken('show@example.com', ['owner']);
      for (let i = 0; i < 2; i++) {
        const res = await show(token);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers['cache-control'], 'no-store');
        const body = json(res);
        assert.deepEqual(body.organization, { id: org.id, name: 'Acme Corp' });
        assert.equal(body.email, 'show@example.com');
        assert.deepEqual(body.roles, ['owner']);
        assert.equal(body.account_exists, false);
        assert.equal(typeof body.expires_at, 'string');
      }
      await createUser(t, { email: 'show-existing@example.com' });
      assert.equal(json(await show(await inviteToken('show-existing@example.com'))).account_exists, true);
    });

    it('unknown and malformed tokens are 404 invitation_not_found; an expired one 410 invitation_expired', async () => {
      for (const token of ['A'.repeat(43), 'short', 'x'.repeat(300)]) {
        const res = await show(token);
        assert.equal(res.statusCode, 404, res.body);
        assert.equal(json(res).code, 'invitation_not_found');
        const acc = await accept(token, { password: PASSWORD });
        assert.equal(acc.statusCode, 404);
      }
      const token = await inviteToken('expired@example.com');
      await t.ctx.db
        .updateTable('organization_invitations')
        .set({ expires_at: Date.now() - 1000 })
        .where('email', '=', 'expired@example.com')
        .execute();
      const res = await show(token);
      assert.equal(res.statusCode, 410, res.body);
      assert.equal(json(res).code, 'invitation_expired');
      const acc = await accept(token, { password: PASSWORD });
      assert.equal(acc.statusCode, 410);
      assert.equal(json(acc).code, 'invitation_expired');
      assert.equal(await userByEmail('expired@example.com'), undefined, 'no account made');
    });

    it('signed in with the invited address: 200 the membership, then the link is used (410 invitation_used)', async () => {
      const user = await createUser(t, { email: 'joiner@example.com', name: 'Jo Iner' });
      const token = await inviteToken('joiner@example.com', ['owner', 'member']);
      const headers = await authHeaders(t, user);
      const res = await accept(token, undefined, headers);
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      assert.deepEqual(body.organization, { id: org.id, slug: org.slug, name: 'Acme Corp' });
      assert.deepEqual(body.user, {
        id: user.id,
        email: 'joiner@example.com',
        name: 'Jo Iner',
        status: 'active',
      });
      assert.deepEqual([...(body.roles as string[])].sort(), ['member', 'owner']);
      assert.equal(body.access_token, undefined);
      assert.deepEqual(await memberRoles(t, org.id, user.id), ['member', 'owner']);
      const count = await t.ctx.db
        .selectFrom('organizations')
        .select('member_count')
        .where('id', '=', org.id)
        .executeTakeFirstOrThrow();
      assert.equal(Number(count.member_count), 1);
      const again = await accept(token, {}, headers);
      assert.equal(again.statusCode, 410, again.body);
      assert.equal(json(again).code, 'invitation_used');
      assert.equal(await statusOf(token), 'invitation_used');
      const actions = (
        await t.ctx.db
          .selectFrom('audit_log')
          .select(['action', 'details'])
          .where('action', 'like', 'organization.%')
          .execute()
      ).map((r) => r.action);
      assert.ok(actions.includes('organization.invitation.accepted'));
      assert.ok(actions.includes('organization.member.added'));
    });

    it("another account's token is 403 forbidden and the invitation stays usable", async () => {
      const token = await inviteToken('meant-for@example.com');
      const other = await createUser(t, { email: 'someone-else@example.com' });
      const res = await accept(token, undefined, await authHeaders(t, other));
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(json(res).code, 'forbidden');
      assert.equal(await memberRoles(t, org.id, other.id), null);
      assert.equal(await statusOf(token), 'pending');
      // A bad Bearer token is the guard's 401, never a fall back to the anonymous acceptance.
      const bad = await accept(token, { password: PASSWORD }, { authorization: 'Bearer nope' });
      assert.equal(bad.statusCode, 401, bad.body);
      assert.equal(await userByEmail('meant-for@example.com'), undefined);
    });

    it('no account yet: {password, name} creates it active and verified, signs in, and makes it a member', async () => {
      const token = await inviteToken('Brand.New@example.com', ['member']);
      const res = await accept(token, { password: PASSWORD, name: '  Bran New  ' });
      assert.equal(res.statusCode, 200, res.body);
      const body = json<{ access_token: string; refresh_token: string; user: Record<string, unknown> }>(res);
      assert.equal(typeof body.access_token, 'string');
      assert.equal(typeof body.refresh_token, 'string');
      assert.equal(body.user.email, 'brand.new@example.com');
      assert.equal(body.user.status, 'active');
      assert.equal(body.user.email_verified, true);
      assert.equal(body.user.name, 'Bran New');
      const row = await userByEmail('brand.new@example.com');
      assert.ok(row);
      assert.equal(row.created_via, 'invitation');
      assert.deepEqual(await memberRoles(t, org.id, row.id), ['member']);
      // The token works, and the password signs in.
      const profile = await t.app.inject({
        url: '/api/v1/profile',
        headers: { authorization: `Bearer ${body.access_token}` },
      });
      assert.equal(profile.statusCode, 200, profile.body);
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/v1/login',
        payload: { email: 'brand.new@example.com', password: PASSWORD },
      });
      assert.equal(login.statusCode, 200, login.body);
      // One way in: the pipeline's login.success names this way.
      const success = await t.ctx.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'login.success')
        .where('target_id', '=', row.id)
        .orderBy('at')
        .executeTakeFirstOrThrow();
      assert.equal(JSON.parse(success.details ?? '{}').method, 'organization_invitation');
      assert.equal(await statusOf(token), 'invitation_used');
      assert.equal((await accept(token, { password: PASSWORD })).statusCode, 410);
    });

    it('an address that has an account: {password} is 401 (accept signed in), nothing changes', async () => {
      const existing = await createUser(t, { email: 'has-account@example.com', password: PASSWORD });
      const token = await inviteToken('has-account@example.com');
      const res = await accept(token, { password: 'another long enough passphrase here' });
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(json(res).code, 'unauthenticated');
      assert.equal(await memberRoles(t, org.id, existing.id), null);
      assert.equal((await userByEmail('has-account@example.com'))?.password_hash, existing.password_hash);
      assert.equal(await statusOf(token), 'pending');
      // Neither a password nor a Bearer token: 401 too.
      assert.equal((await accept(await inviteToken('nobody-yet@example.com'))).statusCode, 401);
    });

    it('a weak password is 422 weak_password; bad bodies are 400; nothing is stored and the link stays usable', async () => {
      const token = await inviteToken('weak@example.com');
      const weak = await accept(token, { password: 'short' });
      assert.equal(weak.statusCode, 422, weak.body);
      assert.equal(json(weak).code, 'weak_password');
      for (const payload of [
        { password: 12345 },
        { password: PASSWORD, extra: 1 },
        { name: 'x'.repeat(201), password: PASSWORD },
      ]) {
        const res = await accept(token, payload);
        assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
        assert.equal(json(res).code, 'validation_failed');
      }
      assert.equal(await userByEmail('weak@example.com'), undefined);
      assert.equal(await statusOf(token), 'pending');
    });

    it('single use under concurrency: of five simultaneous acceptances exactly one makes the account', async () => {
      const token = await inviteToken('race@example.com');
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => accept(token, { password: PASSWORD })),
      );
      const ok = answers.filter((r) => r.statusCode === 200);
      assert.equal(ok.length, 1, answers.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
      for (const r of answers.filter((x) => x.statusCode !== 200)) {
        assert.ok([401, 410].includes(r.statusCode), r.body);
      }
      const users = await t.ctx.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'race@example.com')
        .execute();
      assert.equal(users.length, 1);

      const member = await createUser(t, { email: 'race-signed-in@example.com' });
      const token2 = await inviteToken('race-signed-in@example.com');
      const headers = await authHeaders(t, member);
      const signedIn = await Promise.all(Array.from({ length: 5 }, () => accept(token2, undefined, headers)));
      assert.equal(signedIn.filter((r) => r.statusCode === 200).length, 1);
      assert.deepEqual(await memberRoles(t, org.id, member.id), ['member']);
    });

    it('joining an organization one already belongs to is 409 already_member, the link stays usable', async () => {
      const user = await createUser(t, { email: 'double@example.com' });
      const token = await inviteToken('double@example.com');
      await addMember(t, org.id, user, ['member']);
      const res = await accept(token, undefined, await authHeaders(t, user));
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(json(res).code, 'already_member');
      assert.equal(await statusOf(token), 'pending');
    });
  });
}
