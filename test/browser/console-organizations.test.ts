import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleScreenshot, signInToConsole } from './console-support.ts';
import {
  ADMIN_EMAIL,
  assertAccessible,
  assertClean,
  linkFromMail,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

// The console's organizations and roles (docs/console.md) in Chromium: a role made, an organization
// created and edited, someone invited (the mail arrives with the join link), the invitation
// revoked, a member added and removed, the organization found by search and deleted.

describe('admin console in Chromium: organizations and roles', { skip: skipWithoutChromium }, () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.close();
  });

  it('role → organization → settings → invitation (mailed, revoked) → member → search → delete', async () => {
    const member = await stack.adminApi('POST', '/api/v1/users', {
      email: 'member@pages.test',
      name: 'Mem Ber',
      password: 'a long member passphrase 12345',
    });
    assert.equal(member.status, 201);
    const tab = await openTab(stack);
    const { page } = tab;
    await signInToConsole(page, stack.origin);

    // A role of the catalogue.
    await page.getByRole('link', { name: 'Roles' }).click();
    await page.getByRole('heading', { name: 'Roles', level: 1 }).waitFor();
    await page.getByRole('cell', { name: 'owner', exact: true }).waitFor();
    const roleForm = page.locator('#role-form');
    await roleForm.getByLabel('Name').fill('billing');
    await roleForm.getByLabel('Description').fill('Reads invoices');
    await roleForm.getByLabel('Permissions').fill('invoices:read invoices:write');
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByRole('status').filter({ hasText: 'The role billing was saved.' }).waitFor();
    await page.getByRole('cell', { name: 'invoices:read invoices:write' }).waitFor();
    await assertAccessible(page, 'the console roles');

    // An organization.
    await page.getByRole('link', { name: 'Organizations' }).click();
    await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor();
    await page.getByRole('cell', { name: 'No organizations yet.' }).waitFor();
    const create = page.locator('#org-create');
    await create.getByLabel('Name').fill('Globex Corporation');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Globex Corporation', level: 1 }).waitFor();
    await page
      .getByRole('status')
      .filter({ hasText: 'The organization Globex Corporation was created.' })
      .waitFor();
    assert.equal(await page.locator('#org-slug').inputValue(), 'globex-corporation');
    await assertAccessible(page, 'the console organization');

    // Its settings.
    await page.getByLabel('E-mail domains').fill('globex.test');
    await page.getByLabel('Require a second factor to act in this organization').check();
    await page.getByLabel('Metadata (JSON object)').fill('{"plan": "pro"}');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'The settings were saved.' }).waitFor();
    const orgId = (await page.locator('#org-id').textContent()) ?? '';
    const saved = await stack.adminApi('GET', `/api/v1/organizations/${orgId}`);
    const body = saved.body as { domains: string[]; require_mfa: boolean; metadata: unknown };
    assert.deepEqual(body.domains, ['globex.test']);
    assert.equal(body.require_mfa, true);
    assert.deepEqual(body.metadata, { plan: 'pro' });
    await page.getByLabel('Metadata (JSON object)').fill('[1, 2]');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('alert').filter({ hasText: 'Metadata must be a JSON object' }).waitFor();

    // An invitation: mailed with the join link, listed, then revoked.
    await page.getByLabel('E-mail address to invite').fill('newcomer@pages.test');
    await page.locator('#org-invite-roles').fill('member billing');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'An invitation was sent to newcomer@pages.test.' })
      .waitFor();
    await page.getByRole('cell', { name: 'newcomer@pages.test', exact: true }).waitFor();
    const link = await linkFromMail(stack.smtp, 'newcomer@pages.test', '/account/organizations/join/');
    assert.equal(await page.locator('#org-invite-url').textContent(), link);
    const shown = await fetch(`${stack.origin}/api/v1/organization-invitations/${link.split('/').pop()}`);
    assert.equal(shown.status, 200);
    await page.getByRole('button', { name: 'Revoke the invitation of newcomer@pages.test' }).click();
    await page.getByRole('button', { name: 'Revoke invitation' }).click();
    await page.getByRole('cell', { name: 'No pending invitations.' }).waitFor();
    const revoked = await fetch(`${stack.origin}/api/v1/organization-invitations/${link.split('/').pop()}`);
    assert.equal(revoked.status, 410);

    // A member by e-mail address, then removed.
    await page.getByLabel('Member (e-mail address or user id)').fill('member@pages.test');
    await page.locator('#org-member-roles').fill('billing');
    await page.getByRole('button', { name: 'Add or change member' }).click();
    await page.getByRole('status').filter({ hasText: 'The member was saved.' }).waitFor();
    await page.getByRole('cell', { name: 'member@pages.test', exact: true }).waitFor();
    await consoleScreenshot(page, 'console-organization');
    await page.getByRole('button', { name: 'Remove member@pages.test from the organization' }).click();
    await page.getByRole('button', { name: 'Remove member', exact: true }).click();
    await page.getByRole('cell', { name: 'No members yet.' }).waitFor();

    // An admin who is a member sees the organization on /account too (users.roles, then its name).
    await page.getByLabel('Member (e-mail address or user id)').fill(ADMIN_EMAIL);
    await page.locator('#org-member-roles').fill('owner');
    await page.getByRole('button', { name: 'Add or change member' }).click();
    await page.getByRole('cell', { name: ADMIN_EMAIL, exact: true }).waitFor();
    await page.goto(`${stack.origin}/account`);
    const mine = page.locator('#organizations-section');
    await mine.getByText('Globex Corporation').waitFor();
    await mine.getByText('Your roles: owner').waitFor();
    await page.goto(`${stack.origin}/admin#/organizations/${orgId}`);
    await page.getByRole('heading', { name: 'Globex Corporation', level: 1 }).waitFor();

    // Found by search; deleted.
    await page.getByRole('link', { name: '← All organizations' }).click();
    await page.locator('#orgs-q').fill('globex');
    await page.getByRole('link', { name: 'Globex Corporation' }).waitFor();
    await page.locator('#orgs-q').fill('nothing-like-it');
    await page.getByRole('cell', { name: 'No organization matches.' }).waitFor();
    await page.locator('#orgs-q').fill('');
    await page.getByRole('link', { name: 'Globex Corporation' }).waitFor();
    await page.goto(`${stack.origin}/admin#/organizations/${orgId}`);
    await page.getByRole('heading', { name: 'Globex Corporation', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Delete this organization…' }).click();
    await page.getByRole('button', { name: 'Delete organization', exact: true }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'The organization Globex Corporation was deleted.' })
      .waitFor();
    await page.getByRole('cell', { name: 'No organizations yet.' }).waitFor();
    assertClean(tab);
  });
});
