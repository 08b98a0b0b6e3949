import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';

/*
 * password-fields-unmasked-or-unpastable: OWASP ASVS 5.0 6.2.6 (password inputs are
 * type=password) and 6.2.7 (paste, browser password helpers and password managers allowed) held
 * on the hosted pages and the console only because the HTML was written so; nothing checked it.
 * Now every password input of web/ is type=password with autocomplete current-password or
 * new-password (what password managers key on), none caps the length below the 64 characters of
 * 6.2.9 or blocks paste, and no script listens for paste; the served pages carry the same inputs.
 */

const WEB = fileURLToPath(new URL('../../web/', import.meta.url));
const html = readdirSync(WEB).filter((f) => f.endsWith('.html'));
const scripts = readdirSync(WEB).filter((f) => f.endsWith('.js'));

/** The attributes of each <input> of an HTML text. */
function inputs(text: string): Array<Record<string, string>> {
  return [...text.matchAll(/<input\b([^>]*)>/g)].map((m) =>
    Object.fromEntries(
      [...(m[1] ?? '').matchAll(/([a-z-]+)(?:="([^"]*)")?/g)].map((a) => [a[1] ?? '', a[2] ?? '']),
    ),
  );
}

/** A field that takes a password: by its name, id or autocomplete token. */
const takesPassword = (a: Record<string, string>) =>
  /password|^confirm$/.test(a.name ?? '') ||
  /password/.test(a.autocomplete ?? '') ||
  (/password/.test(a.id ?? '') && a.type !== 'email');

describe('password fields of the hosted pages and the console', () => {
  it('every password input is type=password with a password autocomplete, no short maxlength, no paste handler', () => {
    const found: string[] = [];
    for (const file of html) {
      for (const a of inputs(readFileSync(`${WEB}${file}`, 'utf8'))) {
        if (!takesPassword(a)) continue;
        const where = `${file} #${a.id}`;
        found.push(where);
        assert.equal(a.type, 'password', `${where}: masked`);
        assert.match(a.autocomplete ?? '', /^(current-password|new-password)$/, `${where}: autocomplete`);
        if (a.maxlength !== undefined)
          assert.ok(Number(a.maxlength) >= 64, `${where}: maxlength ${a.maxlength}`);
        for (const handler of ['onpaste', 'oncopy', 'ondrop'])
          assert.equal(a[handler], undefined, `${where}: ${handler}`);
      }
    }
    // The pages that take a password: sign-in, sign-up, reset, invitation, /account, the console.
    for (const page of ['sign-in', 'sign-up', 'reset-password', 'invitation', 'account', 'admin']) {
      assert.ok(
        found.some((w) => w.startsWith(`${page}.html `)),
        `${page}.html has password inputs (${found.join(', ')})`,
      );
    }
  });

  it('no page or script listens for paste or turns it off', () => {
    for (const file of [...scripts, ...html]) {
      const text = readFileSync(`${WEB}${file}`, 'utf8');
      assert.ok(!/\bpaste\b/i.test(text), `${file}: a paste handler`);
    }
  });
});

for (const dialect of DIALECTS) {
  describe(`served password fields [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
    });
    after(() => t.destroy());

    it('the served sign-in, account, reset and invitation pages carry masked password inputs', async () => {
      for (const url of [
        '/account/sign-in',
        '/account',
        `/account/reset-password/${'A'.repeat(43)}`,
        `/account/invitation/${'A'.repeat(43)}`,
      ]) {
        const res = await t.app.inject({ url });
        assert.equal(res.statusCode, 200, url);
        const fields = inputs(res.body).filter(takesPassword);
        assert.ok(fields.length > 0, `${url}: a password input`);
        for (const a of fields) {
          assert.equal(a.type, 'password', `${url} #${a.id}`);
          assert.match(a.autocomplete ?? '', /^(current-password|new-password)$/, `${url} #${a.id}`);
        }
      }
    });
  });
}
