import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ALL_ENDPOINTS,
  type Documentation,
  expectedDocumentation,
  FORM_A_DOCUMENTATION,
  FORM_B_DOCUMENTATION,
  formModules,
  indexBody,
  MODULES,
} from '../helpers/api-contract.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { callListed, notServed } from '../helpers/endpoints.ts';
import { authHeaders, firstAdmin } from '../helpers/users.ts';

const FORMS = [
  { form: 'A', documentation: FORM_A_DOCUMENTATION },
  { form: 'B', documentation: FORM_B_DOCUMENTATION },
] as const;

/** The module of docs/api.md §2 an index entry belongs to. */
function moduleOf(group: string, label: string): string | undefined {
  return MODULES.find((m) => m.endpoints.includes(`${group}.${label}`))?.name;
}

describe('the docs/api.md tables transcribed for the tests', () => {
  it('agree with each other: §2 modules of each form produce §3 documentation', () => {
    assert.deepEqual(expectedDocumentation(formModules('A')), FORM_A_DOCUMENTATION);
    assert.deepEqual(expectedDocumentation(formModules('B')), FORM_B_DOCUMENTATION);
    assert.equal(Object.keys(ALL_ENDPOINTS).length, MODULES.flatMap((m) => m.endpoints).length);
  });
});

for (const dialect of DIALECTS) {
  for (const { form, documentation } of FORMS) {
    describe(`index, form ${form} [${dialect}]`, () => {
      let t: TestApp;
      before(async () => {
        t = await buildTestApp(dialect, { env: { API_FORM: form } });
      });
      after(() => t.destroy());

      const index = async (url = '/') => {
        const res = await t.app.inject({ url });
        assert.equal(res.statusCode, 200);
        return json<ReturnType<typeof indexBody>>(res);
      };

      it('is public and the same at / and /api/v1', async () => {
        const root = await index('/');
        assert.deepEqual(await index('/api/v1'), root);
        assert.equal(root.message, 'Gatehouse user and access service');
        assert.equal(root.status, 'running');
        assert.equal(root.version, 'v1');
      });

      it(`equals docs/api.md §3 form ${form} whole`, async () => {
        const body = await index('/');
        assert.deepEqual(body, indexBody(documentation));
        assert.deepEqual(Object.keys(body.documentation), Object.keys(documentation), 'groups in order');
        assert.deepEqual(await index('/api/v1'), indexBody(documentation));
      });

      it(`lists nothing that is not in docs/api.md §3 form ${form}, each at its documented route`, async () => {
        const body = await index('/');
        assert.deepEqual(Object.keys(body), ['message', 'status', 'version', 'documentation']);
        const groups = Object.keys(body.documentation);
        assert.deepEqual(groups, [...groups].sort(), 'groups sorted by name');
        for (const [group, labels] of Object.entries(body.documentation as Documentation)) {
          for (const [label, route] of Object.entries(labels)) {
            assert.equal(route, documentation[group]?.[label], `${group}.${label} in form ${form}`);
            const module = moduleOf(group, label);
            assert.ok(
              module && formModules(form).has(module),
              `${group}.${label} belongs to an enabled module`,
            );
          }
        }
        // The modules every form has (core, health, admin) are built: those must be there whole.
        for (const group of ['core', 'health', 'admin']) {
          assert.deepEqual(body.documentation[group], documentation[group], group);
        }
      });

      it('never lists an endpoint that does not answer', async () => {
        const body = await index('/');
        for (const labels of Object.values(body.documentation as Documentation)) {
          for (const route of Object.values(labels)) {
            const res = await callListed(t, route);
            assert.ok(!notServed(res), `${route} answers (got ${res.statusCode} ${res.body})`);
            assert.notEqual(res.statusCode, 500, `${route}: ${res.body}`);
          }
        }
      });

      it('never lists an endpoint that does not answer, also with every module switched on (last: it changes the state)', async () => {
        const headers = {
          ...(await authHeaders(t, await firstAdmin(t))),
          'content-type': 'application/json',
        };
        for (const name of ['account', 'user_admin', 'idp', 'invitations']) {
          const res = await t.app.inject({
            method: 'PUT',
            url: `/api/v1/admin/modules/${name}`,
            headers,
            payload: '{"enabled":true}',
          });
          assert.equal(res.statusCode, 200);
        }
        const body = await index('/');
        for (const labels of Object.values(body.documentation as Documentation)) {
          for (const route of Object.values(labels)) {
            const res = await callListed(t, route);
            assert.ok(!notServed(res), `${route} answers (got ${res.statusCode} ${res.body})`);
            assert.notEqual(res.statusCode, 500, `${route}: ${res.body}`);
          }
        }
      });
    });
  }
}
