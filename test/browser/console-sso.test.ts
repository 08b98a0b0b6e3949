import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { DIALECTS } from '../helpers/databases.ts';
import { createSamlIdp, type SamlIdp } from '../support/saml-idp.ts';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  launchBrowser,
  openTab,
  type Stack,
  skipWithoutChromium,
  startStack,
} from './harness.ts';

// docs/sso.md, "The console": a SAML connection's page in the providers view shows the SP values
// the IdP asks for (read from the metadata Gatehouse serves), its metadata URL serves XML, and the
// test sign-in runs the SP-initiated flow in a new tab against a samlify IdP and lands signed in.
// Also the hosted pages' side of sso_required: the refusal's sentence with a button to the connection.
let browser: Browser | undefined;
after(async () => {
  await browser?.close();
});

const attr = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

for (const dialect of DIALECTS) {
  describe(`admin console in Chromium: a SAML connection's page (${dialect})`, {
    skip: skipWithoutChromium,
  }, () => {
    let stack: Stack;
    let idp: SamlIdp;
    let server: Server;
    let spMetadata = '';
    let orgId = '';

    before(async () => {
      browser ??= await launchBrowser();
      stack = await startStack({}, { dialect, browser });
      // The IdP answers the AuthnRequest with the HTTP-POST binding's form, as Okta or Entra ID do.
      server = createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        if (url.pathname !== '/sso') {
          res.writeHead(404).end();
          return;
        }
        idp
          .respond(spMetadata, {
            location: url.toString(),
            user: { nameId: 'tess@corp.example', email: 'tess@corp.example', name: 'Tess Corp' },
          })
          .then((answer) => {
            res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
              `<!doctype html><html lang="en"><title>Test IdP</title><body><form method="post" action="${attr(`${stack.origin}/saml/corp/acs`)}">
<input type="hidden" name="SAMLResponse" value="${attr(answer.SAMLResponse)}">
<input type="hidden" name="RelayState" value="${attr(answer.RelayState ?? '')}">
<button type="submit">Continue to the service</button></form></body></html>`,
            );
          })
          .catch(() => res.writeHead(400).end());
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      idp = createSamlIdp('https://idp.corp.example/saml', `http://127.0.0.1:${port}/sso`);
      const org = await stack.adminApi('POST', '/api/v1/organizations', {
        name: 'Corp',
        domains: ['corp.example'],
      });
      assert.equal(org.status, 201, JSON.stringify(org.body));
      orgId = (org.body as { id: string }).id;
      const created = await stack.adminApi('POST', '/api/v1/idp/providers', {
        name: 'corp',
        display_name: 'Corp SSO',
        kind: 'saml',
        organization_id: orgId,
        domains: ['corp.example'],
        idp_metadata_xml: idp.metadataXml,
        saml: { attribute_mapping: { email: 'email', name: 'displayName' } },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      spMetadata = await (await fetch(`${stack.origin}/saml/corp/metadata`)).text();
    });
    after(async () => {
      await stack?.close();
      await new Promise((resolve) => server?.close(resolve));
    });

    it('shows the SP entity id, ACS URL and metadata URL; the metadata is XML; the test sign-in completes', async () => {
      const tab = await openTab(stack);
      const { page, context } = tab;
      // An enabled connection claims a domain: the sign-in asks for the address first.
      await page.goto(`${stack.origin}/admin`);
      await page.waitForURL(`${stack.origin}/account/sign-in?next=/admin`);
      await page.getByLabel('E-mail address').fill(ADMIN_EMAIL);
      await page.getByRole('button', { name: 'Continue', exact: true }).click();
      await page.getByLabel('Password', { exact: true }).fill(ADMIN_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(`${stack.origin}/admin`);
      await page.getByRole('link', { name: 'Sign-in providers' }).click();
      await page.getByRole('heading', { name: 'Sign-in providers', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Connection page of Corp SSO' }).click();
      const panel = page.locator('#sso-connection');
      await panel.getByRole('heading', { name: 'SAML connection: Corp SSO' }).waitFor();
      const value = (key: string) => panel.locator(`[data-sso="${key}"]`);
      await value('entity_id')
        .filter({ hasText: `${stack.origin}/saml/corp` })
        .waitFor();
      assert.equal(await value('entity_id').textContent(), `${stack.origin}/saml/corp`);
      assert.equal(await value('acs_url').textContent(), `${stack.origin}/saml/corp/acs`);
      const metadataUrl = await value('metadata_url').getAttribute('href');
      assert.equal(metadataUrl, `${stack.origin}/saml/corp/metadata`);
      assert.equal(await value('scim_url').textContent(), `${stack.origin}/scim/v2`);

      const metadata = await fetch(String(metadataUrl));
      assert.equal(metadata.status, 200);
      assert.match(String(metadata.headers.get('content-type')), /xml/);
      assert.match(await metadata.text(), /entityID="[^"]*\/saml\/corp"/);

      // Copy puts the exact value on the clipboard.
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.origin });
      await panel.locator('[data-copy-sso="acs_url"]').click();
      await page.locator('#sso-copied').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
      assert.equal(
        await page.evaluate(() => navigator.clipboard.readText()),
        `${stack.origin}/saml/corp/acs`,
      );

      // The test sign-in: the SP-initiated flow in a new tab, through the IdP, back signed in.
      const [popup] = await Promise.all([
        context.waitForEvent('page'),
        panel.getByRole('link', { name: 'Test sign-in' }).click(),
      ]);
      await popup.getByRole('button', { name: 'Continue to the service' }).click();
      await popup.waitForURL(`${stack.origin}/account`);
      await popup.getByRole('heading', { name: 'Profile' }).waitFor();
      assert.ok((await popup.content()).includes('tess@corp.example'));
      await context.close();
    });

    it('a hosted page shows 403 sso_required with a button to the connection', async () => {
      const on = await stack.adminApi('PATCH', `/api/v1/organizations/${orgId}`, { sso_required: true });
      assert.equal(on.status, 200, JSON.stringify(on.body));
      const tab = await openTab(stack);
      const { page } = tab;
      await page.goto(`${stack.origin}/account/forgot-password`);
      await page.getByLabel('E-mail address').fill('tess@corp.example');
      await page.locator('#forgot-form button[type="submit"]').click();
      const alert = page.locator('#forgot-form [data-error]');
      await alert.filter({ hasText: 'Your organization signs in with single sign-on.' }).waitFor();
      const button = alert.getByRole('link', { name: 'Continue with single sign-on' });
      const href = String(await button.getAttribute('href'));
      assert.match(href, /^\/api\/v1\/idp\/corp\/start\?return_to=%2Faccount$/);
      await button.click();
      await page.getByRole('button', { name: 'Continue to the service' }).click();
      await page.waitForURL(`${stack.origin}/account`);
      await tab.context.close();
    });
  });
}
