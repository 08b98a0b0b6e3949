import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSamlIdp } from '../support/saml-idp.ts';
import { readSecretPanel } from './console-support.ts';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

// docs/sso.md, "The console": a SAML connection of an organization shows the SCIM base URL and a
// "New SCIM token" button calling POST /api/v1/organizations/<id>/scim-token (docs/api.md §23), the
// token shown once, and that token works at /scim/v2. Written against the contract: it passes once
// the SCIM endpoints (another branch) are merged.
describe('admin console in Chromium: a new SCIM token for a connection’s organization', {
  skip: skipWithoutChromium,
}, () => {
  let stack: Stack;
  let orgId = '';

  before(async () => {
    stack = await startStack();
    const org = await stack.adminApi('POST', '/api/v1/organizations', {
      name: 'Initech',
      domains: ['initech.example'],
    });
    assert.equal(org.status, 201, JSON.stringify(org.body));
    orgId = (org.body as { id: string }).id;
    const created = await stack.adminApi('POST', '/api/v1/idp/providers', {
      name: 'initech',
      display_name: 'Initech SSO',
      kind: 'saml',
      organization_id: orgId,
      domains: ['initech.example'],
      idp_metadata_xml: createSamlIdp('https://idp.initech.example/saml').metadataXml,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
  });
  after(async () => {
    await stack?.close();
  });

  it('shows the SCIM base URL; "New SCIM token" shows the token once and it works at /scim/v2', async () => {
    const tab = await openTab(stack);
    const { page, context } = tab;
    await page.goto(`${stack.origin}/admin`);
    await page.waitForURL(`${stack.origin}/account/sign-in?next=/admin`);
    await page.getByLabel('E-mail address').fill(ADMIN_EMAIL);
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.getByLabel('Password', { exact: true }).fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${stack.origin}/admin`);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.origin });
    await page.getByRole('link', { name: 'Sign-in providers' }).click();
    await page.getByRole('button', { name: 'Connection page of Initech SSO' }).click();
    const panel = page.locator('#sso-connection');
    await panel
      .locator('[data-sso="scim_url"]')
      .filter({ hasText: `${stack.origin}/scim/v2` })
      .waitFor();
    await panel.getByRole('button', { name: 'New SCIM token' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Make a new token' }).click();
    const secret = page.locator('#sso-scim-secret');
    await secret.waitFor({ state: 'visible' });
    const token = await readSecretPanel(page, secret);
    const users = await fetch(`${stack.origin}/scim/v2/Users`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(users.status, 200, await users.text());
    // "I have stored it": the token leaves the page.
    await secret.getByRole('button', { name: 'I have stored it' }).click();
    assert.equal(await secret.isVisible(), false);
    assert.equal(((await secret.locator('code').textContent()) ?? '').length, 0);
    await context.close();
  });
});
