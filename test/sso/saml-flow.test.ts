import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SAML } from '@node-saml/node-saml';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, json, PUBLIC_URL, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';
import { createSamlIdp, IDP_CERT, type RespondOptions, RSA_SHA1, type SamlIdp } from '../support/saml-idp.ts';

const ACS = `${PUBLIC_URL}/saml/acme/acs`;
const COOKIE = 'gatehouse_saml_flow';

function setCookieLine(res: LightMyRequestResponse, name: string): string | undefined {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return lines.find((l) => l.startsWith(`${name}=`));
}
const cookieValue = (line: string | undefined) => line?.split(';')[0]?.split('=')[1];

const xmlOf = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
const b64Of = (xml: string) => Buffer.from(xml, 'utf8').toString('base64');

for (const dialect of DIALECTS) {
  describe(`sso: SAML sign-in against samlify's identity provider [${dialect}]`, () => {
    let t: TestApp;
    let idp: SamlIdp;
    let admin: { authorization: string };
    let spMetadata: string;

    before(async () => {
      idp = createSamlIdp();
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      admin = await authHeaders(t, await firstAdmin(t));
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/idp/providers',
        headers: admin,
        payload: {
          name: 'acme',
          display_name: 'Acme SSO',
          kind: 'saml',
          domains: ['acme.example'],
          idp_metadata_xml: idp.metadataXml,
          saml: { attribute_mapping: { email: 'email', name: 'displayName' } },
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      const meta = await t.app.inject({ url: '/saml/acme/metadata' });
      assert.equal(meta.statusCode, 200, meta.body);
      spMetadata = meta.body;
    });
    after(async () => {
      await t?.destroy();
    });

    /** start → the IdP → the ACS, as a browser would; `tamper` edits the signed XML. */
    async function signIn(
      o: Omit<RespondOptions, 'location'> & { unsolicited?: boolean },
      tamper?: (xml: string) => string,
      browser?: { cookie?: string | null; relayState?: string },
    ) {
      let location: string | null = null;
      let cookie: string | undefined;
      if (!o.unsolicited) {
        const start = await t.app.inject({ url: '/api/v1/idp/acme/start' });
        assert.equal(start.statusCode, 302, start.body);
        location = String(start.headers.location);
        cookie = cookieValue(setCookieLine(start, COOKIE));
      }
      const answer = await idp.respond(spMetadata, { ...o, location });
      const SAMLResponse = tamper ? b64Of(tamper(xmlOf(answer.SAMLResponse))) : answer.SAMLResponse;
      const fields: Record<string, string> = { SAMLResponse };
      const relay = browser?.relayState ?? answer.RelayState;
      if (relay !== undefined) fields.RelayState = relay;
      const sent = browser?.cookie === undefined ? cookie : browser.cookie;
      const res = await t.app.inject({
        method: 'POST',
        url: '/saml/acme/acs',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(sent ? { cookie: `${COOKIE}=${sent}` } : {}),
        },
        payload: new URLSearchParams(fields).toString(),
      });
      return { res, answer, SAMLResponse, cookie };
    }

    const landedWith = (res: LightMyRequestResponse) => {
      if (res.statusCode === 302) return String(res.headers.location);
      return res.statusCode === 200 && setCookieLine(res, 'gatehouse_refresh')
        ? 'signed_in'
        : `?${res.statusCode}`;
    };
    /** The detail of the last refused sign-in's audit entry: which check refused (never answered). */
    const lastRefusal = async () => {
      const row = await t.ctx.db
        .selectFrom('audit_log')
        .select('details')
        .where('action', '=', 'login.failure')
        .orderBy('at', 'desc')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      return String((JSON.parse(row.details) as { detail?: string }).detail);
    };
    const usersNamed = (email: string) =>
      t.ctx.db.selectFrom('users').select('id').where('email', '=', email).execute();

    it('serves the SP metadata as settled', async () => {
      assert.match(spMetadata, /entityID="http:\/\/gatehouse\.test\/saml\/acme"/);
      assert.match(spMetadata, /AuthnRequestsSigned="false"/);
      assert.match(spMetadata, /WantAssertionsSigned="true"/);
      assert.match(spMetadata, /nameid-format:emailAddress/);
      assert.match(spMetadata, /nameid-format:persistent/);
      assert.ok(
        spMetadata.includes(`Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${ACS}"`),
      );
      const missing = await t.app.inject({ url: '/saml/nope/metadata' });
      assert.equal(missing.statusCode, 404);
    });

    it('answers the admin API with the saml block read from the metadata, not the XML', async () => {
      const res = await t.app.inject({ url: '/api/v1/idp/providers', headers: admin });
      const acme = json<{ data: Array<Record<string, unknown>> }>(res).data.find((p) => p.name === 'acme');
      assert.ok(acme);
      assert.equal(acme.kind, 'saml');
      assert.equal(acme.issuer, null);
      assert.equal(acme.client_id, null);
      assert.equal(acme.scopes, null);
      assert.equal(acme.preset, null);
      assert.deepEqual(acme.domains, ['acme.example']);
      const saml = acme.saml as Record<string, unknown>;
      assert.equal(saml.idp_entity_id, idp.entityId);
      assert.equal(saml.idp_sso_url, idp.ssoUrl);
      assert.equal((saml.idp_certificates as string[]).length, 1);
      assert.equal(saml.allow_idp_initiated, false);
      assert.ok(!res.body.includes('EntityDescriptor'));
    });

    it('start: 302 to the IdP with an AuthnRequest and a SameSite=None; Secure; HttpOnly cookie', async () => {
      const start = await t.app.inject({ url: '/api/v1/idp/acme/start' });
      assert.equal(start.statusCode, 302);
      const location = new URL(String(start.headers.location));
      assert.equal(`${location.origin}${location.pathname}`, idp.ssoUrl);
      assert.ok(location.searchParams.get('SAMLRequest'));
      assert.ok((location.searchParams.get('RelayState') ?? '').length >= 32);
      const line = setCookieLine(start, COOKIE) ?? '';
      assert.match(line, /HttpOnly/i);
      assert.match(line, /SameSite=None/i);
      assert.match(line, /Secure/i);
      assert.match(line, /Max-Age=600/i);
    });

    it('signs in a person at one of the domains: created, verified, identity (idp_entity_id, NameID), session cookie', async () => {
      const { res } = await signIn({
        user: { nameId: 'u-1001', email: 'ann@acme.example', name: 'Ann Acme' },
      });
      assert.equal(landedWith(res), 'signed_in', res.body);
      assert.match(res.body, /url=\/account/);
      const user = await t.ctx.db
        .selectFrom('users')
        .selectAll()
        .where('email', '=', 'ann@acme.example')
        .executeTakeFirstOrThrow();
      assert.equal(user.email_verified, 1);
      assert.equal(user.name, 'Ann Acme');
      const identity = await t.ctx.db
        .selectFrom('identities')
        .selectAll()
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      assert.equal(identity.issuer, idp.entityId);
      assert.equal(identity.subject, 'u-1001');
      // The same person again, with a signed Response too (Okta's default): the same account.
      const again = await signIn({
        user: { nameId: 'u-1001', email: 'ann@acme.example' },
        signResponse: true,
      });
      assert.equal(landedWith(again.res), 'signed_in', again.res.body);
      assert.equal((await usersNamed('ann@acme.example')).length, 1);
    });

    // [what, options, tamper, the check that must refuse it (as recorded in the audit entry)]
    const refusals: Array<
      [string, Parameters<typeof signIn>[0], ((xml: string) => string) | undefined, RegExp]
    > = [
      [
        'wrong Audience',
        {
          user: { nameId: 'r1', email: 'r1@acme.example' },
          values: { Audience: 'https://other.example/sp' },
        },
        undefined,
        /audience mismatch/,
      ],
      [
        'wrong Destination',
        {
          user: { nameId: 'r2', email: 'r2@acme.example' },
          values: { Destination: 'https://other.example/acs' },
        },
        undefined,
        /Destination is not this ACS URL/,
      ],
      [
        'wrong Recipient',
        {
          user: { nameId: 'r3', email: 'r3@acme.example' },
          values: { SubjectRecipient: 'https://other.example/acs' },
        },
        undefined,
        /Recipient is not this ACS URL/,
      ],
      [
        'wrong assertion Issuer',
        {
          user: { nameId: 'r4', email: 'r4@acme.example' },
          values: { AssertionIssuer: 'https://evil.example' },
        },
        undefined,
        /the assertion Issuer is not idp_entity_id/,
      ],
      [
        'wrong Response Issuer',
        {
          user: { nameId: 'r5', email: 'r5@acme.example' },
          values: { Issuer: 'https://evil.example', AssertionIssuer: 'https://idp.example.test/saml' },
        },
        undefined,
        /the Response Issuer is not idp_entity_id/,
      ],
      [
        'expired Conditions',
        {
          user: { nameId: 'r6', email: 'r6@acme.example' },
          values: { ConditionsNotOnOrAfter: new Date(Date.now() - 61_000).toISOString() },
        },
        undefined,
        /expired/,
      ],
      [
        'expired SubjectConfirmationData',
        {
          user: { nameId: 'r7', email: 'r7@acme.example' },
          values: { SubjectConfirmationDataNotOnOrAfter: new Date(Date.now() - 61_000).toISOString() },
        },
        undefined,
        /SubjectConfirmationData has expired/,
      ],
      [
        'Conditions not valid yet',
        {
          user: { nameId: 'r8', email: 'r8@acme.example' },
          // An hour ahead: the table is built when the file is collected, and the second dialect's
          // run can start minutes later on a loaded machine (2 minutes ahead had passed by then).
          values: { ConditionsNotBefore: new Date(Date.now() + 3_600_000).toISOString() },
        },
        undefined,
        /not yet valid|not valid yet/,
      ],
      [
        'signed by a foreign key',
        { user: { nameId: 'r9', email: 'r9@acme.example' }, foreign: true },
        undefined,
        /Invalid signature/,
      ],
      [
        'signed with SHA-1',
        { user: { nameId: 'r10', email: 'r10@acme.example' }, signatureAlgorithm: RSA_SHA1 },
        undefined,
        /SHA-1/,
      ],
      [
        'an address outside the domains',
        { user: { nameId: 'r11', email: 'r11@elsewhere.example' } },
        undefined,
        /not at one of the connection's domains/,
      ],
      [
        'an address at a subdomain',
        { user: { nameId: 'r12', email: 'r12@eu.acme.example' } },
        undefined,
        /not at one of the connection's domains/,
      ],
      [
        'an unsigned assertion (signature removed)',
        { user: { nameId: 'r13', email: 'r13@acme.example' } },
        (xml) => xml.replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/, ''),
        /Invalid signature/,
      ],
      [
        'a Response signed by the IdP around an unsigned assertion (a Response signature is never enough)',
        { user: { nameId: 'r18', email: 'r18@acme.example' }, onlyResponseSigned: true },
        undefined,
        /Invalid signature/,
      ],
      [
        'a duplicated assertion ID: the signed assertion in Extensions, an evil one with its ID in its place',
        { user: { nameId: 'r19', email: 'r19@acme.example' } },
        (xml) => {
          const signed = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(xml)?.[0] ?? '';
          const evil = signed
            .replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/, '')
            .replaceAll('r19@acme.example', 'ann@acme.example');
          return xml
            .replace(signed, evil)
            .replace('<samlp:Status>', `<samlp:Extensions>${signed}</samlp:Extensions><samlp:Status>`);
        },
        /2 assertions/,
      ],
      [
        'a DTD with an entity',
        { user: { nameId: 'r14', email: 'r14@acme.example' } },
        (xml) => `<!DOCTYPE samlp:Response [<!ENTITY x "y">]>${xml.replace(/^<\?xml[^>]*>/, '')}`,
        /DTD/,
      ],
      [
        'two assertions',
        { user: { nameId: 'r15', email: 'r15@acme.example' } },
        (xml) => xml.replace(/(<saml:Assertion[\s\S]*<\/saml:Assertion>)/, '$1$1'),
        /2 assertions/,
      ],
      [
        'an EncryptedAssertion beside the assertion',
        { user: { nameId: 'r16', email: 'r16@acme.example' } },
        (xml) => xml.replace('</samlp:Response>', '<saml:EncryptedAssertion/></samlp:Response>'),
        /encrypted assertions/,
      ],
      [
        'a changed NameID after signing',
        { user: { nameId: 'r17', email: 'r17@acme.example' } },
        (xml) =>
          xml.replace('r17@acme.example</saml:AttributeValue>', 'ann@acme.example</saml:AttributeValue>'),
        /Invalid signature/,
      ],
    ];
    for (const [what, options, tamper, reason] of refusals) {
      it(`refuses ${what}: idp_token_invalid, nothing created`, async () => {
        const email = options.user.email as string;
        const { res } = await signIn(options, tamper);
        assert.equal(landedWith(res), '/account/sign-in?error=idp_token_invalid', res.body);
        assert.match(await lastRefusal(), reason);
        assert.equal((await usersNamed(email)).length, 0);
      });
    }

    it('the Response-only fixture above is validly signed: a library told to trust Response signatures accepts it', async () => {
      // The control for the refusal above: the Response's signature verifies, so Gatehouse refuses
      // it only because the assertion itself carries none.
      const answer = await idp.respond(spMetadata, {
        location: null,
        user: { nameId: 'ctl', email: 'ctl@acme.example' },
        onlyResponseSigned: true,
      });
      const lax = new SAML({
        callbackUrl: ACS,
        issuer: `${PUBLIC_URL}/saml/acme`,
        audience: `${PUBLIC_URL}/saml/acme`,
        idpCert: IDP_CERT,
        wantAssertionsSigned: false,
        wantAuthnResponseSigned: true,
      });
      const { profile } = await lax.validatePostResponseAsync({ SAMLResponse: answer.SAMLResponse });
      assert.equal(profile?.nameID, 'ctl');
    });

    it('refuses signature wrapping: the signed assertion moved into Extensions, an evil one in its place', async () => {
      const { res } = await signIn({ user: { nameId: 'w1', email: 'w1@acme.example' } }, (xml) => {
        const signed = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(xml)?.[0] ?? '';
        const evil = signed
          .replace(/<ds:Signature[\s\S]*?<\/ds:Signature>/, '')
          .replaceAll('w1@acme.example', 'ann@acme.example')
          .replace(/ID="[^"]+"/, 'ID="_evil"');
        return xml
          .replace(signed, `${evil}`)
          .replace('<samlp:Status>', `<samlp:Extensions>${signed}</samlp:Extensions><samlp:Status>`);
      });
      assert.equal(landedWith(res), '/account/sign-in?error=idp_token_invalid', res.body);
      assert.match(await lastRefusal(), /2 assertions/);
      assert.equal((await usersNamed('ann@acme.example')).length, 1);
    });

    it('reads a NameID with a comment inside as its whole text (the comment-truncation attack finds nobody)', async () => {
      const { res } = await signIn({ user: { nameId: 'u-1001.evil', email: 'eve@acme.example' } }, (xml) =>
        xml.replace('>u-1001.evil</saml:NameID>', '>u-1001<!---->.evil</saml:NameID>'),
      );
      // The signature still verifies (canonicalization drops comments), and the subject read is the
      // signed one: a new identity for Eve, never Ann's `u-1001`.
      assert.equal(landedWith(res), 'signed_in', res.body);
      const eve = await t.ctx.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'eve@acme.example')
        .executeTakeFirstOrThrow();
      const identity = await t.ctx.db
        .selectFrom('identities')
        .selectAll()
        .where('user_id', '=', eve.id)
        .executeTakeFirstOrThrow();
      assert.equal(identity.subject, 'u-1001.evil');
    });

    it('refuses a replayed assertion (recorded only when accepted), even from a fresh start of the same browser', async () => {
      const first = await signIn({ user: { nameId: 'p1', email: 'p1@acme.example' } });
      assert.equal(landedWith(first.res), 'signed_in', first.res.body);
      // The same signed response, posted again with a new live request of this browser.
      const start = await t.app.inject({ url: '/api/v1/idp/acme/start' });
      const cookie = cookieValue(setCookieLine(start, COOKIE));
      const again = await t.app.inject({
        method: 'POST',
        url: '/saml/acme/acs',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${COOKIE}=${cookie}` },
        payload: new URLSearchParams({
          SAMLResponse: first.SAMLResponse,
          RelayState: first.answer.RelayState ?? '',
        }).toString(),
      });
      // InResponseTo names the spent request: link_invalid before the replay check is even reached.
      assert.equal(landedWith(again), '/account/sign-in?error=link_invalid');
      const rows = await t.ctx.db.selectFrom('saml_assertion_uses').selectAll().execute();
      assert.ok(rows.length >= 1);
    });

    it('refuses an unsolicited response (allow_idp_initiated false): link_invalid', async () => {
      const { res } = await signIn({ user: { nameId: 'u2', email: 'u2@acme.example' }, unsolicited: true });
      assert.equal(landedWith(res), '/account/sign-in?error=link_invalid');
      assert.equal((await usersNamed('u2@acme.example')).length, 0);
    });

    it('refuses a missing cookie and a foreign RelayState: link_invalid', async () => {
      const noCookie = await signIn({ user: { nameId: 'c1', email: 'c1@acme.example' } }, undefined, {
        cookie: null,
      });
      assert.equal(landedWith(noCookie.res), '/account/sign-in?error=link_invalid');
      const foreign = await signIn({ user: { nameId: 'c2', email: 'c2@acme.example' } }, undefined, {
        relayState: 'x'.repeat(43),
      });
      assert.equal(landedWith(foreign.res), '/account/sign-in?error=link_invalid');
      // Another browser's request (its cookie) for this response's InResponseTo.
      const other = await t.app.inject({ url: '/api/v1/idp/acme/start' });
      const stolen = await signIn({ user: { nameId: 'c3', email: 'c3@acme.example' } }, undefined, {
        cookie: cookieValue(setCookieLine(other, COOKIE)) ?? null,
      });
      assert.equal(landedWith(stolen.res), '/account/sign-in?error=link_invalid');
      for (const e of ['c1@acme.example', 'c2@acme.example', 'c3@acme.example'])
        assert.equal((await usersNamed(e)).length, 0);
    });

    it('accepts an IdP-initiated response when allowed, landing on /account, and refuses its replay', async () => {
      const put = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/idp/providers/acme',
        headers: admin,
        payload: {
          saml: { allow_idp_initiated: true, attribute_mapping: { email: 'email', name: 'displayName' } },
        },
      });
      assert.equal(put.statusCode, 200, put.body);
      try {
        const { res, SAMLResponse } = await signIn({
          user: { nameId: 'i1', email: 'i1@acme.example' },
          unsolicited: true,
        });
        assert.equal(landedWith(res), 'signed_in', res.body);
        assert.match(res.body, /url=\/account"/);
        const replay = await t.app.inject({
          method: 'POST',
          url: '/saml/acme/acs',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ SAMLResponse }).toString(),
        });
        assert.equal(landedWith(replay), '/account/sign-in?error=idp_token_invalid');
        assert.match(await lastRefusal(), /used before/);
      } finally {
        await t.app.inject({
          method: 'PUT',
          url: '/api/v1/idp/providers/acme',
          headers: admin,
          payload: { saml: { allow_idp_initiated: false } },
        });
      }
    });

    it('refuses to link by e-mail to an admin account: identity_link_required, nothing linked', async () => {
      const boss = await createUser(t, { email: 'boss@acme.example', role: 'admin' });
      const { res } = await signIn({ user: { nameId: 'b1', email: 'boss@acme.example' } });
      assert.equal(landedWith(res), '/account/sign-in?error=identity_link_required');
      const ids = await t.ctx.db
        .selectFrom('identities')
        .select('id')
        .where('user_id', '=', boss.id)
        .execute();
      assert.equal(ids.length, 0);
    });
  });
}
