import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { type CodeFlow, REDIRECT, startCodeFlow } from '../oauth/code-flow.ts';

// API §24: `ui_locales` of the authorization request holds for every page of that interaction,
// ahead of the cookie and Accept-Language; the interaction page hands it to the sign-in step.
describe('ui_locales of an authorization request', () => {
  let f: CodeFlow;
  before(async () => {
    f = await startCodeFlow('sqlite');
  });
  after(() => f?.close());

  it("the interaction's page speaks the first served ui_locales language, whatever else the browser says", async () => {
    const p = await f.person();
    const url = oidc.buildAuthorizationUrl(f.config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
      ui_locales: 'sw zh-CN fr',
    });
    const res = await p.go(url.href);
    const location = res.headers.get('location') ?? '';
    assert.match(location, /\/account\/authorize\/[^/?]+$/);
    // (The cookie jar sends the interaction's cookie here; Accept-Language is the browser's word.)
    const page = await p.go(location, { headers: { 'accept-language': 'de' } });
    const html = await page.text();
    assert.match(html, /<html lang="zh-Hans" dir="ltr">/);
    assert.match(html, /<title>登录应用 · /);
    // Outside the interaction, the browser's own word counts again.
    const other = await fetch(`${f.s.origin}/account/sign-in`, { headers: { 'accept-language': 'de' } });
    assert.match(await other.text(), /<html lang="de"/);
  });

  it("the pages Gatehouse renders for oidc-provider speak the browser's language (an error here)", async () => {
    const endpoint = f.config.serverMetadata().authorization_endpoint ?? '';
    const url = `${endpoint}?client_id=no-such-client&response_type=code&scope=openid&redirect_uri=${encodeURIComponent(REDIRECT)}`;
    const res = await fetch(url, { headers: { 'accept-language': 'ar, en;q=0.1' }, redirect: 'manual' });
    const html = await res.text();
    assert.match(html, /<html lang="ar" dir="rtl">/);
    assert.match(html, /<title>تعذّر متابعة تسجيل الدخول · /);
    const english = await (await fetch(url, { redirect: 'manual' })).text();
    assert.match(english, /<html lang="en" dir="ltr">/);
    assert.match(english, /<title>Sign-in could not continue · /);
  });
});
