import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { documentation, type LoadedModule } from '../../src/kernel/registry.ts';
import {
  ALL_ENDPOINTS,
  type Documentation,
  expectedDocumentation,
  formModules,
  LATER_MODULE_ENTRIES,
  LATER_MODULES,
  laterEnabled,
  MODULES,
} from '../helpers/api-contract.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { callListed, isModuleDisabled, notServed } from '../helpers/endpoints.ts';
import { authHeaders, createUser, firstAdmin } from '../helpers/users.ts';

interface ModuleObject {
  name: string;
  enabled: boolean;
  required: boolean;
  description: string;
  endpoints: string[];
}

const OPTIONAL = MODULES.filter((m) => !m.required).map((m) => m.name);
const REQUIRED = MODULES.filter((m) => m.required).map((m) => m.name);

/** Routes of a module as docs/api.md writes them (`GET /api/v1/profile`). */
function contractRoutes(module: string): string[] {
  return (MODULES.find((m) => m.name === module)?.endpoints ?? []).map((e) => ALL_ENDPOINTS[e]!);
}

async function adminList(t: TestApp): Promise<ModuleObject[]> {
  const res = await t.app.inject({
    url: '/api/v1/admin/modules',
    headers: await authHeaders(t, await firstAdmin(t)),
  });
  assert.equal(res.statusCode, 200);
  return json<{ data: ModuleObject[] }>(res).data;
}

async function toggle(t: TestApp, name: string, enabled: boolean) {
  return t.app.inject({
    method: 'PUT',
    url: `/api/v1/admin/modules/${name}`,
    headers: { ...(await authHeaders(t, await firstAdmin(t))), 'content-type': 'application/json' },
    payload: JSON.stringify({ enabled }),
  });
}

async function indexDocumentation(t: TestApp): Promise<Documentation> {
  return json<{ documentation: Documentation }>(await t.app.inject({ url: '/' })).documentation;
}

/** The documentation without the given routes (what disabling a module must leave). */
function without(doc: Documentation, routes: string[]): Documentation {
  const out: Documentation = {};
  for (const [group, labels] of Object.entries(doc)) {
    const kept = Object.entries(labels).filter(([, route]) => !routes.includes(route));
    if (kept.length > 0) out[group] = Object.fromEntries(kept);
  }
  return out;
}

describe('index derivation', () => {
  it('lists enabled modules only, hides hidden endpoints, sorts groups, drops empty groups', () => {
    const ep = (group: string, label: string, method: 'GET' | 'POST', path: string, hidden = false) =>
      ({
        group,
        label,
        method,
        path,
        hidden,
        access: 'public',
        summary: '',
        schema: {},
        handler: () => null,
      }) as const;
    const modules = [
      { info: { name: 'users' }, endpoints: [ep('users', 'get', 'GET', '/api/v1/users/:id')] },
      { info: { name: 'core' }, endpoints: [ep('core', 'health', 'GET', '/api/v1/core/health')] },
      { info: { name: 'idp' }, endpoints: [ep('idp', 'config', 'GET', '/api/v1/idp/config')] },
      {
        info: { name: 'auth' },
        endpoints: [ep('auth', 'jwks', 'GET', '/.well-known/jwks.json', true)],
      },
    ] as unknown as LoadedModule[];
    assert.deepEqual(
      documentation(modules, (name) => name !== 'idp'),
      { core: { health: 'GET /api/v1/core/health' }, users: { get: 'GET /api/v1/users/<id>' } },
    );
  });
});

for (const dialect of DIALECTS) {
  describe(`admin modules [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('lists the nine modules of docs/api.md §2 in order, with form A’s state, then later ones as the form sets them', async () => {
      const list = await adminList(t);
      assert.deepEqual(
        list.map((m) => [m.name, m.required, m.enabled]),
        [
          ...MODULES.map((m) => [m.name, m.required, formModules('A').has(m.name)]),
          ...LATER_MODULES.map((name) => [name, false, laterEnabled(name, 'A')]),
        ],
      );
      for (const m of list.filter((m) => !LATER_MODULES.includes(m.name))) {
        assert.deepEqual(Object.keys(m).sort(), ['description', 'enabled', 'endpoints', 'name', 'required']);
        assert.ok(m.description.length > 0);
        for (const route of m.endpoints)
          assert.ok(contractRoutes(m.name).includes(route), `${m.name}: ${route}`);
      }
    });

    it('lists every endpoint of docs/api.md §2 under its module', async () => {
      for (const m of (await adminList(t)).filter((m) => !LATER_MODULES.includes(m.name))) {
        assert.deepEqual([...m.endpoints].sort(), contractRoutes(m.name).sort(), m.name);
      }
    });

    it('refuses to disable a required module: 409 module_required; enabling it is a no-op', async () => {
      for (const name of REQUIRED) {
        const res = await toggle(t, name, false);
        assert.equal(res.statusCode, 409, name);
        assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
        assert.equal(json(res).code, 'module_required');
        const on = await toggle(t, name, true);
        assert.equal(on.statusCode, 200);
        assert.equal(json<ModuleObject>(on).enabled, true);
      }
      assert.ok((await adminList(t)).filter((m) => m.required).every((m) => m.enabled));
    });

    it('answers an unknown module with 404 not_found', async () => {
      for (const name of ['nope', 'CORE', '__proto__', 'constructor', 'user-admin']) {
        const res = await toggle(t, name, true);
        assert.equal(res.statusCode, 404, name);
        assert.equal(json(res).code, 'not_found');
      }
    });

    it('is admin-only: 401 without a token, 403 forbidden for a user', async () => {
      const anonymous = await t.app.inject({ url: '/api/v1/admin/modules' });
      assert.equal(anonymous.statusCode, 401);
      const user = await authHeaders(t, await createUser(t));
      const list = await t.app.inject({ url: '/api/v1/admin/modules', headers: user });
      assert.equal(list.statusCode, 403);
      assert.equal(json(list).code, 'forbidden');
      const put = await t.app.inject({
        method: 'PUT',
        url: '/api/v1/admin/modules/account',
        headers: { ...user, 'content-type': 'application/json' },
        payload: '{"enabled":false}',
      });
      assert.equal(put.statusCode, 403);
      assert.equal(json(put).code, 'forbidden');
      assert.equal((await adminList(t)).find((m) => m.name === 'account')?.enabled, true, 'nothing changed');
    });

    it('toggling changes routing and the index, and survives a restart', async () => {
      for (const name of OPTIONAL) {
        const before = await indexDocumentation(t);
        const listed = (await adminList(t)).find((m) => m.name === name)!;
        const wasOn = listed.enabled;

        const off = await toggle(t, name, false);
        assert.equal(off.statusCode, 200);
        assert.deepEqual(json(off), { ...listed, enabled: false });
        assert.deepEqual(await indexDocumentation(t), without(before, listed.endpoints));
        for (const route of listed.endpoints) {
          const res = await callListed(t, route);
          assert.ok(isModuleDisabled(res), `${route} is switched off: ${res.statusCode} ${res.body}`);
          assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
          if (route.startsWith('GET ')) {
            const head = await t.app.inject({ method: 'HEAD', url: route.slice(4).replace(/<\w+>/g, 'x') });
            assert.equal(head.statusCode, 404, `HEAD ${route}`);
          }
        }

        const on = await toggle(t, name, true);
        assert.equal(json<ModuleObject>(on).enabled, true);
        const enabledDoc = await indexDocumentation(t);
        for (const route of listed.endpoints) {
          assert.ok(JSON.stringify(enabledDoc).includes(route), `${route} back in the index`);
          assert.ok(!notServed(await callListed(t, route)), `${route} answers again`);
        }
        if (!wasOn) await toggle(t, name, false);
      }

      // Form A with account off and invitations on, then a restart on the same database.
      await toggle(t, 'account', false);
      await toggle(t, 'invitations', true);
      const doc = await indexDocumentation(t);
      const state = (await adminList(t)).map((m) => [m.name, m.enabled]);
      await t.close();
      t = await t.restart();
      assert.deepEqual(
        (await adminList(t)).map((m) => [m.name, m.enabled]),
        state,
      );
      assert.deepEqual(await indexDocumentation(t), doc);
      assert.equal(t.ctx.modules.isEnabled('account'), false);
      assert.equal(t.ctx.modules.isEnabled('invitations'), true);
    });

    it('keeps overrides on top of the form when API_FORM changes', async () => {
      const own = await buildTestApp(dialect, { env: { API_FORM: 'A' } });
      let restarted: TestApp | undefined;
      try {
        await toggle(own, 'account', false);
        await toggle(own, 'invitations', true);
        await own.close();
        restarted = await own.restart({ API_FORM: 'B' });
        const enabled = Object.fromEntries((await adminList(restarted)).map((m) => [m.name, m.enabled]));
        assert.equal(enabled.account, false, 'override');
        assert.equal(enabled.invitations, true, 'override and form B agree');
        assert.equal(enabled.user_admin, false, 'form B default');
        assert.equal(enabled.idp, false, 'form B default');
      } finally {
        await (restarted ?? own).destroy();
      }
    });

    it('ignores a stored override that would switch off a required module', async () => {
      await t.ctx.db
        .insertInto('module_overrides')
        .values({ name: 'core', enabled: 0, updated_at: Date.now() })
        .onConflict((oc) => oc.column('name').doUpdateSet({ enabled: 0 }))
        .execute();
      await t.ctx.modules.refresh();
      assert.equal(t.ctx.modules.isEnabled('core'), true);
      assert.equal((await t.app.inject({ url: '/api/v1/core/health' })).statusCode, 200);
      await t.ctx.db.deleteFrom('module_overrides').where('name', '=', 'core').execute();
    });

    it('shows a toggle to another instance on the same database within seconds', async () => {
      const other = await t.restart();
      try {
        const target = !other.ctx.modules.isEnabled('idp');
        await toggle(t, 'idp', target);
        // Generous bound; the contract says 5 s, the poll runs every 2 s.
        for (let i = 0; i < 100 && other.ctx.modules.isEnabled('idp') !== target; i++) await sleep(100);
        assert.equal(other.ctx.modules.isEnabled('idp'), target);
        const listed = (await adminList(other)).find((m) => m.name === 'idp')!;
        assert.equal(listed.enabled, target);
      } finally {
        await other.close();
      }
    });
  });

  describe(`module switches against docs/api.md [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'A' } });
    });
    after(() => t.destroy());

    it('disabling each optional module removes exactly its docs/api.md endpoints, which answer module_disabled', async () => {
      const enabled = formModules('A');
      enabled.add('invitations');
      await toggle(t, 'invitations', true);
      assert.deepEqual(await indexDocumentation(t), expectedDocumentation(enabled));
      for (const name of OPTIONAL) {
        await toggle(t, name, false);
        enabled.delete(name);
        assert.deepEqual(await indexDocumentation(t), expectedDocumentation(enabled), `without ${name}`);
        for (const route of contractRoutes(name)) {
          assert.ok(isModuleDisabled(await callListed(t, route)), `${route} answers module_disabled`);
        }
      }
    });
  });

  describe(`form B start [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'B' } });
    });
    after(() => t.destroy());

    it('enables invitations and nothing else optional', async () => {
      assert.deepEqual(
        (await adminList(t)).map((m) => [m.name, m.enabled]),
        [
          ...MODULES.map((m) => [m.name, formModules('B').has(m.name)]),
          ...LATER_MODULES.map((name) => [name, laterEnabled(name, 'B')]),
        ],
      );
    });
  });

  describe(`full preset start [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
    });
    after(() => t.destroy());

    it('lists the indexed endpoints of recovery, email and registration in the module list', async () => {
      const list = await adminList(t);
      for (const name of ['recovery', 'email', 'registration']) {
        const module = list.find((m) => m.name === name);
        assert.deepEqual(module?.endpoints, Object.values(LATER_MODULE_ENTRIES[name] ?? {}), name);
      }
    });

    // docs/api.md §2: `full` is every optional module but `registration` (sign-up is a deliberate policy).
    it('enables every optional module except registration', async () => {
      assert.deepEqual(
        (await adminList(t)).map((m) => [m.name, m.enabled]),
        [
          ...MODULES.map((m) => [m.name, true]),
          ...LATER_MODULES.map((name) => [name, laterEnabled(name, 'full')]),
        ],
      );
    });
  });
}
