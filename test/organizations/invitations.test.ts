import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { UserRow } from '../../src/platform/db/schema.ts';
import { json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { buildMailTestApp } from '../helpers/mail.ts';
import { authHeaders, createUser } from '../helpers/users.ts';
import type { SmtpHarness } from '../support/smtp-server.ts';
import {
  addMember,
  createOrganization,
  createRole,
  invitationRows,
  tokenOfUrl,
} from './invitations-helpers.ts';

// API §21, invitations to an organization: who may invite whom with which roles, the one mail,
// replacing, revoking, the daily cap, and tenancy (a manager of A never reaches B's invitations).

type Org = { id: string; name: string; slug: string };
type Headers = Record<string, string>;

for (const dialect of DIALECTS) {
  describe(`organization invitations: invite, list, revoke [${dialect}]`, () => {
    let t: TestApp;
    let smtp: SmtpHarness;
    let admin: Headers;
    let adminUser: UserRow;
    let a: Org;
    let b: Org;
    let managerA: UserRow;
    let manager: Headers;
    let managerB: Headers;
    let plainMember: Headers;
    let outsider: Headers;

    const invite = (headers: Headers, org: Org, payload: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: `/api/v1/organizations/${org.id}/invitations`, headers, payload });
    const list = (headers: Headers, org: Org) =>
      t.app.inject({ url: `/api/v1/organizations/${org.id}/invitations`, headers });
    const show = (token: string) => t.app.inject({ url: `/api/v1/organization-invitations/${token}` });
    const mailsTo = (address: string) => smtp.messages.filter((m) => m.envelope.to.includes(address));

    before(async () => {
      ({ t, smtp } = await buildMailTestApp(dialect));
      adminUser = await createUser(t, { role: 'admin', name: 'Ada Admin' });
      admin = await authHeaders(t, adminUser);
      a = await createOrganization(t, { name: 'Acme' });
      b = await createOrganization(t, { name: 'Bravo' });
      managerA = await createUser(t, { name: 'Mia Manager' });
      await addMember(t, a.id, managerA, ['owner']);
      manager = await authHeaders(t, managerA);
      const mb = await createUser(t);
      await addMember(t, b.id, mb, ['owner']);
      managerB = await authHeaders(t, mb);
      const pm = await createUser(t);
      await addMember(t, a.id, pm, ['member']);
      plainMember = await authHeaders(t, pm);
      outsider = await authHeaders(t, await createUser(t));
      await createRole(t, 'billing', ['invoices:read']);
    });
    after(() => t.destroy());

    it("an admin's invitation answers invite_url (the join page), mails it once, stores only the token's hash", async () => {
      const res = await invite(admin, a, { email: 'New.Person@Example.com', roles: ['member'] });
      assert.equal(res.statusCode, 201, res.body);
      const body = json<{
        id: string;
        email: string;
        roles: string[];
        expires_at: string;
        invite_url: string;
      }>(res);
      assert.equal(body.email, 'new.person@example.com');
      assert.deepEqual(body.roles, ['member']);
      assert.match(
        body.invite_url,
        /^http:\/\/gatehouse\.test\/account\/organizations\/join\/[A-Za-z0-9_-]{43}$/,
      );
      const token = tokenOfUrl(body.invite_url);
      // INVITATION_TTL_S (7 days by default).
      const ttl = Date.parse(body.expires_at) - Date.now();
      assert.ok(ttl > 6.9 * 86_400_000 && ttl <= 7 * 86_400_000, `lifetime ${ttl}`);
      const mails = await smtp.waitFor(1);
      const mail = mails.find((m) => m.envelope.to.includes('new.person@example.com'));
      assert.ok(mail, 'the invitation mail arrived');
      assert.match(mail.subject, /Ada Admin invited you to Acme/);
      assert.ok(mail.text?.includes(body.invite_url), 'the mail carries the join link');
      const [row] = (await invitationRows(t, a.id)).filter((r) => r.id === body.id);
      assert.ok(row);
      assert.equal(row.status, 'pending');
      assert.notEqual(row.token_hash, token);
      assert.ok(!JSON.stringify(row).includes(token), 'the token itself is stored nowhere in the row');
      const audit = await t.ctx.db
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'organization.invitation.created')
        .execute();
      assert.equal(audit.length, 1);
      assert.ok(!JSON.stringify(audit).includes(token), 'the audit entry holds no token');
      assert.deepEqual(JSON.parse(audit[0]?.details ?? '{}').invitation, {
        id: body.id,
        email: 'new.person@example.com',
        roles: ['member'],
      });
    });

    it("a manager's invitation goes only by mail (no invite_url); a member without org:members:manage gets 403", async () => {
      const res = await invite(manager, a, { email: 'by-manager@example.com', roles: ['member'] });
      assert.equal(res.statusCode, 201, res.body);
      const body = json(res);
      assert.equal(body.invite_url, undefined);
      assert.deepEqual(Object.keys(body).sort(), ['email', 'expires_at', 'id', 'roles']);
      await smtp.waitFor(2);
      const mail = mailsTo('by-manager@example.com')[0];
      assert.ok(mail);
      assert.match(mail.text ?? '', /\/account\/organizations\/join\/[A-Za-z0-9_-]{43}/);
      assert.match(mail.subject, /Mia Manager invited you to Acme/);

      const refused = await invite(plainMember, a, { email: 'x@example.com', roles: ['member'] });
      assert.equal(refused.statusCode, 403, refused.body);
      assert.equal(json(refused).code, 'forbidden');
    });

    it('the escalation rule: a manager hands out only roles whose every permission they hold there', async () => {
      const before = (await invitationRows(t, a.id)).length;
      const res = await invite(manager, a, { email: 'billing@example.com', roles: ['billing'] });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(json(res).code, 'forbidden');
      const unknown = await invite(manager, a, { email: 'billing@example.com', roles: ['ghost'] });
      assert.equal(unknown.statusCode, 404, unknown.body);
      assert.equal(json(unknown).code, 'role_not_found');
      assert.equal((await invitationRows(t, a.id)).length, before, 'nothing stored');
      assert.equal(mailsTo('billing@example.com').length, 0);
      // An admin is not bound by it.
      const byAdmin = await invite(admin, a, { email: 'billing@example.com', roles: ['billing'] });
      assert.equal(byAdmin.statusCode, 201, byAdmin.body);
    });

    it('inviting a pending address again replaces the invitation: the old token answers 410 invitation_used', async () => {
      const first = json<{ invite_url: string }>(
        await invite(admin, a, { email: 'twice@example.com', roles: [] }),
      );
      const second = await invite(admin, a, { email: 'twice@example.com', roles: ['member'] });
      assert.equal(second.statusCode, 201, second.body);
      const old = await show(tokenOfUrl(first.invite_url));
      assert.equal(old.statusCode, 410, old.body);
      assert.equal(json(old).code, 'invitation_used');
      const fresh = await show(tokenOfUrl(json<{ invite_url: string }>(second).invite_url));
      assert.equal(fresh.statusCode, 200, fresh.body);
      assert.deepEqual(json(fresh).roles, ['member']);
      const rows = (await invitationRows(t, a.id)).filter((r) => r.email === 'twice@example.com');
      assert.deepEqual(rows.map((r) => r.status).sort(), ['pending', 'replaced']);
    });

    it('inviting a member answers 409 already_member and stores nothing', async () => {
      const member = await createUser(t, { email: 'already@example.com' });
      await addMember(t, a.id, member, ['member']);
      const before = (await invitationRows(t, a.id)).length;
      const res = await invite(admin, a, { email: 'Already@Example.com', roles: ['member'] });
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(json(res).code, 'already_member');
      assert.equal((await invitationRows(t, a.id)).length, before);
    });

    it('the list shows pending invitations only, never a token or a link', async () => {
      const made = json<{ id: string; invite_url: string }>(
        await invite(admin, a, { email: 'listed@example.com', roles: ['member'] }),
      );
      const res = await list(manager, a);
      assert.equal(res.statusCode, 200, res.body);
      const { data } = json<{ data: Array<Record<string, unknown>> }>(res);
      const listed = data.find((i) => i.id === made.id);
      assert.ok(listed);
      assert.deepEqual(Object.keys(listed).sort(), [
        'created_at',
        'email',
        'expires_at',
        'id',
        'invited_by',
        'roles',
      ]);
      assert.deepEqual(listed.invited_by, { id: adminUser.id, name: 'Ada Admin' });
      assert.ok(!res.body.includes(tokenOfUrl(made.invite_url)), 'no token in the list');
      assert.ok(!res.body.includes('/join/'), 'no link in the list');
      // The replaced invitation of the address is not listed, only its replacement.
      assert.deepEqual(
        data.filter((i) => i.email === 'twice@example.com').map((i) => i.roles),
        [['member']],
      );
      const refused = await list(plainMember, a);
      assert.equal(refused.statusCode, 403, refused.body);
    });

    it('revoking answers 204 and the link then answers 410 invitation_used; an unknown id is 404', async () => {
      const made = json<{ id: string; invite_url: string }>(
        await invite(admin, a, { email: 'revoked@example.com', roles: ['member'] }),
      );
      const res = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/organizations/${a.id}/invitations/${made.id}`,
        headers: manager,
      });
      assert.equal(res.statusCode, 204, res.body);
      const gone = await show(tokenOfUrl(made.invite_url));
      assert.equal(gone.statusCode, 410);
      assert.equal(json(gone).code, 'invitation_used');
      const again = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/organizations/${a.id}/invitations/${made.id}`,
        headers: manager,
      });
      assert.equal(again.statusCode, 404, again.body);
      assert.equal(json(again).code, 'invitation_not_found');
      const junk = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/organizations/${a.id}/invitations/not-a-uuid`,
        headers: manager,
      });
      assert.equal(junk.statusCode, 404, junk.body);
    });

    it("tenancy: a manager of A cannot list, create or delete B's invitations (404, whatever ids they send)", async () => {
      const inB = json<{ id: string; invite_url: string }>(
        await invite(admin, b, { email: 'in-b@example.com', roles: ['member'] }),
      );
      const listB = await list(manager, b);
      assert.equal(listB.statusCode, 404, listB.body);
      assert.equal(json(listB).code, 'organization_not_found');
      const createB = await invite(manager, b, { email: 'sneaky@example.com', roles: ['member'] });
      assert.equal(createB.statusCode, 404, createB.body);
      assert.equal(json(createB).code, 'organization_not_found');
      const deleteB = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/organizations/${b.id}/invitations/${inB.id}`,
        headers: manager,
      });
      assert.equal(deleteB.statusCode, 404, deleteB.body);
      // B's invitation under A's id (A's manager may manage A): still not found, still pending.
      const crossed = await t.app.inject({
        method: 'DELETE',
        url: `/api/v1/organizations/${a.id}/invitations/${inB.id}`,
        headers: manager,
      });
      assert.equal(crossed.statusCode, 404, crossed.body);
      assert.equal((await show(tokenOfUrl(inB.invite_url))).statusCode, 200, 'B still has its invitation');
      assert.equal((await invitationRows(t, b.id)).filter((r) => r.email === 'sneaky@example.com').length, 0);
      // B's manager does not see A's either; an outsider sees neither; an unknown id is the same 404.
      assert.equal((await list(managerB, a)).statusCode, 404);
      assert.equal((await list(outsider, a)).statusCode, 404);
      const unknown = await list(outsider, { ...a, id: '01900000-0000-7000-8000-000000000000' });
      assert.equal(unknown.statusCode, 404);
      assert.equal(json(unknown).code, 'organization_not_found');
    });

    it('bad input is refused with problem+json and stores nothing; no token is 401', async () => {
      const before = (await invitationRows(t, a.id)).length;
      const outbox = (await t.ctx.db.selectFrom('outbox').select('id').execute()).length;
      for (const payload of [
        { email: 'not-an-address', roles: ['member'] },
        { email: 'ok@example.com' },
        { email: 'ok@example.com', roles: 'member' },
        { email: 'ok@example.com', roles: ['Bad Name'] },
        { email: 'ok@example.com', roles: ['member'], extra: true },
        { email: 'ok@example.com', roles: ['member', 'member'] },
      ]) {
        const res = await invite(admin, a, payload);
        assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
        assert.equal(json(res).code, 'validation_failed');
      }
      const anonymous = await invite({}, a, { email: 'ok@example.com', roles: ['member'] });
      assert.equal(anonymous.statusCode, 401);
      assert.equal((await invitationRows(t, a.id)).length, before);
      assert.equal((await t.ctx.db.selectFrom('outbox').select('id').execute()).length, outbox);
    });

    it('at most 100 invitations a day per organization, then 429 (another organization is not counted)', async () => {
      const c = await createOrganization(t, { name: 'Capped' });
      for (let i = 0; i < 100; i++) {
        const res = await invite(admin, c, { email: `cap-${i}@example.com`, roles: [] });
        assert.equal(res.statusCode, 201, res.body);
      }
      const over = await invite(admin, c, { email: 'cap-over@example.com', roles: [] });
      assert.equal(over.statusCode, 429, over.body);
      assert.equal(json(over).code, 'rate_limited');
      assert.ok(Number(over.headers['retry-after']) > 0);
      assert.equal((await invitationRows(t, c.id)).length, 100);
      const elsewhere = await invite(admin, b, { email: 'cap-over@example.com', roles: [] });
      assert.equal(elsewhere.statusCode, 201, elsewhere.body);
    });
  });
}
