import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { v7 as uuidv7 } from 'uuid';
import { openDatabase } from '../../src/platform/db/database.ts';
import {
  assertAccessible,
  assertClean,
  linkFromMail,
  openTab,
  type Stack,
  screenshot,
  signInWithPassword,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

// API §21 and §15 in Chromium: the join page of an invitation to an organization (a new person
// creates the account there; a signed-in person with the invited address accepts with a click;
// another account is told so; a used link says so), and /account's "My organizations" with Leave.

const PASSWORD = 'a long organization passphrase 7';

describe('organizations in Chromium: the join page and /account', { skip: skipWithoutChromium }, () => {
  let stack: Stack;
  let orgId: string;
  /** Whether this tree serves the organizations list and member_delete (orgs-core's endpoints). */
  let membersApi = false;

  const invite = async (email: string, roles: string[]) => {
    const res = await stack.adminApi('POST', `/api/v1/organizations/${orgId}/invitations`, { email, roles });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return linkFromMail(stack.smtp, email, '/account/organizations/join/');
  };

  before(async () => {
    stack = await startStack();
    // The organization is written straight to the table: the invitation flow is what is tested here.
    const database = openDatabase(stack.databaseUrl);
    try {
      orgId = uuidv7();
      const now = Date.now();
      await database.db
        .insertInto('organizations')
        .values({
          id: orgId,
          name: 'Acme Corp',
          slug: 'acme-corp',
          join_by_domain: 0,
          default_roles: '["member"]',
          require_mfa: 0,
          metadata: '{}',
          member_count: 0,
          created_at: now,
          updated_at: now,
        })
        .execute();
    } finally {
      await database.close();
    }
    const index = await fetch(`${stack.origin}/`).then(
      (r) => r.json() as Promise<{ documentation: Record<string, Record<string, string>> }>,
    );
    const org = index.documentation.organizations ?? {};
    membersApi = org.list !== undefined && org.member_delete !== undefined;
  });
  after(async () => {
    await stack?.close();
  });

  it('a new person: the page shows the organization and roles, the password creates the account, /account follows', async (t) => {
    const link = await invite('newbie@pages.test', ['member']);
    const tab = await openTab(stack);
    const { page } = tab;
    const response = await page.goto(link);
    assert.equal(response?.status(), 200);
    await page.getByRole('heading', { name: 'Join Acme Corp' }).waitFor();
    await page.getByText('You are invited to join Acme Corp as newbie@pages.test').waitFor();
    await page.getByText('Your roles there: member.').waitFor();
    await assertAccessible(page, 'the organization join page');
    await screenshot(page, 'organization-join-new');

    await page.getByLabel('Your name').fill('New Bie');
    await page.getByLabel('Choose a password').fill(PASSWORD);
    await page.getByLabel('Type it again').fill('not the same passphrase at all');
    await page.getByRole('button', { name: 'Create my account and join' }).click();
    await page.getByRole('alert').filter({ hasText: 'do not match' }).waitFor();
    await page.getByLabel('Type it again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create my account and join' }).click();
    await page.waitForURL(new RegExp(`/account\\?joined=${orgId}$`));
    await page.getByText('newbie@pages.test', { exact: true }).waitFor();

    if (membersApi) {
      const section = page.locator('#organizations-section');
      await section.getByText('Acme Corp').waitFor();
      await section.getByText('Your roles: member').waitFor();
      await page.getByRole('status').filter({ hasText: 'You joined Acme Corp.' }).waitFor();
      await assertAccessible(page, '/account with organizations');
      page.once('dialog', (dialog) => dialog.accept());
      await page.getByRole('button', { name: 'Leave Acme Corp' }).click();
      await page.getByRole('status').filter({ hasText: 'You left Acme Corp.' }).waitFor();
      await section.getByText('You are not a member of any organization.').waitFor();
    } else {
      t.diagnostic(
        'the organizations list and member_delete are not built on this branch: /account part skipped',
      );
    }

    // The used link now says so instead of offering the form.
    await page.goto(link);
    await page.getByText('This invitation has already been used or was replaced by a newer one.').waitFor();
    assert.equal(await page.locator('#create-account').isHidden(), true);
    assertClean(tab);
    await tab.context.close();
  });

  it('an existing account: sign in first, come back, accept with one click; another account is told so', async () => {
    const email = 'existing@pages.test';
    const made = await stack.adminApi('POST', '/api/v1/users', {
      email,
      name: 'Ex Isting',
      password: PASSWORD,
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const other = await stack.adminApi('POST', '/api/v1/users', {
      email: 'other@pages.test',
      name: 'Other',
      password: PASSWORD,
    });
    assert.equal(other.status, 201);
    const link = await invite(email, ['owner']);

    // Signed in as someone else: the page says only the invited account can accept.
    const tab = await openTab(stack);
    const { page } = tab;
    await signInWithPassword(page, stack.origin, 'other@pages.test', PASSWORD);
    await page.goto(link);
    await page
      .getByText('You are signed in as other@pages.test, but this invitation is for existing@pages.test.')
      .waitFor();
    await page.getByRole('button', { name: 'Sign out and use the invited account' }).click();
    await page.waitForURL(/\/account\/sign-in\?next=/);

    // Signed out, with an account: the page sends the person to sign in and back.
    await page.goto(link);
    await page.getByRole('link', { name: 'Sign in to accept' }).click();
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(link);
    await page.getByText(`You are signed in as ${email}.`).waitFor();
    await assertAccessible(page, 'the organization join page, signed in');
    await page.getByRole('button', { name: 'Accept and join' }).click();
    await page.waitForURL(new RegExp(`/account\\?joined=${orgId}$`));
    // The only manager cannot leave: the page says why.
    await page.getByText('Your roles: owner').waitFor();
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Leave Acme Corp' }).click();
    await page
      .locator('#organizations-section')
      .getByRole('alert')
      .filter({ hasText: 'You are the last person who manages this organization' })
      .waitFor();
    const roles = await stack.adminApi('GET', `/api/v1/users/${(made.body as { id: string }).id}/roles`);
    assert.equal(roles.status, 200);
    assert.deepEqual(
      (roles.body as { organizations: Array<{ id: string; roles: string[] }> }).organizations,
      [{ id: orgId, slug: 'acme-corp', roles: ['owner'] }],
    );
    assertClean(tab);
    await tab.context.close();
  });

  it('an unknown link says so clearly', async () => {
    const tab = await openTab(stack);
    const { page } = tab;
    await page.goto(`${stack.origin}/account/organizations/join/${'A'.repeat(43)}`);
    await page.getByText('This invitation link is not valid. Ask for a new invitation.').waitFor();
    await page.getByRole('link', { name: 'Go to your account' }).waitFor();
    assertClean(tab);
    await tab.context.close();
  });
});
