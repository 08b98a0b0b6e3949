import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { DIALECTS } from '../helpers/databases.ts';
import { createSamlIdp, type SamlIdp } from '../support/saml-idp.ts';
import { launchBrowser, openTab, type Stack, skipWithoutChromium, startStack } from './harness.ts';

// docs/sso.md end to end in Chromium: the sign-in page asks for the address first, an address at a
// connection's domain goes to the IdP (samlify, behind a small HTTP server that answers the
// AuthnRequest with the HTTP-POST binding's form, as Okta or Entra ID do), its signed response comes
// back to the ACS with the browser's SameSite=None flow cookie, and the person lands signed in.
let browser: Browser | undefined;
after(async () => {
  await browser?.close();
});

const attr = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

for (const dialect of DIALECTS) {
  describe(`hosted pages in Chromium: SAML single sign-on (${dialect})`, {
    skip: skipWithoutChromium,
  }, () => {
    let stack: Stack;
    let idp: SamlIdp;
    let server: Server;
    let spMetadata = '';
    let person = { nameId: 'p-1', email: 'pat@corp.example', name: 'Pat Corp' };

    before(async () => {
      browser ??= await launchBrowser();
      stack = await startStack({}, { dialect, browser });
      server = createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        if (url.pathname !== '/sso') {
          res.writeHead(404).end();
          return;
        }
        idp
          .respond(spMetadata, { location: url.toString(), user: person })
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
      const created = await stack.adminApi('POST', '/api/v1/idp/providers', {
        name: 'corp',
        display_name: 'Corp SSO',
        kind: 'saml',
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

    it('asks for the address first and sends an SSO domain to its IdP without a password field', async () => {
      const t = await openTab(stack);
      const { page } = t;
      await page.goto(`${stack.origin}/account/sign-in`);
      await page.getByRole('button', { name: 'Continue', exact: true }).waitFor();
      assert.equal(await page.getByLabel('Password', { exact: true }).isVisible(), false);
      // No button names the connection: the address alone leads there.
      assert.equal(await page.getByRole('link', { name: 'Continue with Corp SSO' }).count(), 0);
      await page.getByLabel('E-mail address').fill('pat@corp.example');
      await page.getByRole('button', { name: 'Continue', exact: true }).click();
      // The IdP's page: its form posts the signed response back, cross-origin, to the ACS.
      await page.getByRole('button', { name: 'Continue to the service' }).click();
      await page.waitForURL(`${stack.origin}/account`);
      await page.getByRole('heading', { name: 'Profile' }).waitFor();
      assert.ok((await page.content()).includes('pat@corp.example'));
      await t.context.close();
    });

    it('shows the password field for an address at no SSO domain', async () => {
      const t = await openTab(stack);
      const { page } = t;
      await page.goto(`${stack.origin}/account/sign-in`);
      await page.getByRole('button', { name: 'Continue', exact: true }).waitFor();
      await page.getByLabel('E-mail address').fill('admin@pages.test');
      await page.getByRole('button', { name: 'Continue', exact: true }).click();
      await page.getByLabel('Password', { exact: true }).waitFor({ state: 'visible' });
      await page.getByLabel('Password', { exact: true }).fill('correct horse battery staple 42');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(`${stack.origin}/account`);
      await t.context.close();
    });

    it('lands on the sign-in page with the refusal when the IdP vouches for an address outside the domains', async () => {
      person = { nameId: 'p-2', email: 'pat@elsewhere.example', name: 'Pat Elsewhere' };
      const t = await openTab(stack);
      const { page } = t;
      await page.goto(`${stack.origin}/account/sign-in`);
      await page.getByRole('button', { name: 'Continue', exact: true }).waitFor();
      await page.getByLabel('E-mail address').fill('pat2@corp.example');
      await page.getByRole('button', { name: 'Continue', exact: true }).click();
      await page.getByRole('button', { name: 'Continue to the service' }).click();
      await page.waitForURL(/\/account\/sign-in\?error=idp_token_invalid$/);
      await page.getByRole('alert').filter({ hasText: 'could not be accepted' }).waitFor();
      await t.context.close();
    });
  });
}
