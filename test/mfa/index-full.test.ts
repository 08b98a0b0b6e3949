import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Documentation, LATER_MODULE_ENDPOINTS } from '../helpers/api-contract.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { callListed, notServed } from '../helpers/endpoints.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';

const SECOND_FACTOR_MODULES = ['mfa', 'passkeys', 'sessions'] as const;

/** The index entries of a module, as `group.label` → route. */
function listedFor(doc: Documentation, module: string): Record<string, string> {
  const wanted = LATER_MODULE_ENDPOINTS[module] ?? {};
  const found: Record<string, string> = {};
  for (const key of Object.keys(wanted)) {
    const [group, label] = key.split('.') as [string, string];
    const route = doc[group]?.[label];
    if (route !== undefined) found[key] = route;
  }
  return found;
}

for (const dialect of DIALECTS) {
  describe(`index of the second-factor modules [${dialect}]`, () => {
    let full: TestApp;
    before(async () => {
      full = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
    });
    after(() => full.destroy());

    it('API_FORM=full lists every entry of mfa, passkeys and sessions exactly as docs/api.md §3', async () => {
      const doc = json<{ documentation: Documentation }>(await full.app.inject({ url: '/' })).documentation;
      for (const module of SECOND_FACTOR_MODULES) {
        assert.deepEqual(listedFor(doc, module), LATER_MODULE_ENDPOINTS[module], module);
      }
      const admin = await authHeaders(full, await firstAdmin(full));
      const list = json<{ data: Array<{ name: string; enabled: boolean; endpoints: string[] }> }>(
        await full.app.inject({ url: '/api/v1/admin/modules', headers: admin }),
      ).data;
      for (const module of SECOND_FACTOR_MODULES) {
        const entry = list.find((m) => m.name === module);
        assert.equal(entry?.enabled, true);
        assert.deepEqual(entry?.endpoints, Object.values(LATER_MODULE_ENDPOINTS[module] ?? {}));
      }
    });

    it('every listed second-factor endpoint answers (no 404 not served, no 500)', async () => {
      for (const module of SECOND_FACTOR_MODULES) {
        for (const route of Object.values(LATER_MODULE_ENDPOINTS[module] ?? {})) {
          const res = await callListed(full, route);
          // A 404 from the handler (no such passkey or session for the placeholder id) is served;
          // the router's own 404 says "No such endpoint".
          const handlerNotFound = res.statusCode === 404 && json(res).detail !== 'No such endpoint';
          assert.ok(
            handlerNotFound || !notServed(res),
            `${route} answers (got ${res.statusCode} ${res.body})`,
          );
          assert.notEqual(res.statusCode, 500, `${route}: ${res.body}`);
        }
      }
    });

    for (const form of ['A', 'B'] as const) {
      it(`form ${form} lists none of them, and they answer 404 module_disabled`, async () => {
        const t = await full.restart({ API_FORM: form });
        try {
          // The restart shares the database; the full app stored no overrides, so the form decides.
          const doc = json<{ documentation: Documentation }>(await t.app.inject({ url: '/' })).documentation;
          for (const module of SECOND_FACTOR_MODULES) assert.deepEqual(listedFor(doc, module), {}, module);
          const res = await t.app.inject({ method: 'GET', url: '/api/v1/mfa' });
          assert.equal(res.statusCode, 404);
          assert.equal(json(res).code, 'module_disabled');
        } finally {
          await t.close();
        }
      });
    }
  });
}
