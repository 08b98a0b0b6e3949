import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { retryDelayMs } from '../../src/modules/webhooks/delivery.ts';
import { isRefusedAddress, urlProblem } from '../../src/platform/outbound/address-guard.ts';
import { buildTestApp, json, type TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { authHeaders, createUser } from '../helpers/users.ts';
import { adminHeaders, createEndpoint } from './helpers.ts';

describe('webhooks: SSRF ranges and schedule (pure)', () => {
  it('refuses every listed range, with IPv4-mapped, NAT64 and 6to4 forms decoded', () => {
    for (const a of [
      '0.1.2.3',
      '10.0.0.1',
      '100.64.0.1',
      '127.0.0.1',
      '169.254.169.254',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '198.18.0.1',
      '198.19.255.255',
      '224.0.0.1',
      '240.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fc00::1',
      'fd12::1',
      'fe80::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.1.2.3',
      '64:ff9b::a00:1',
      '64:ff9b::127.0.0.1',
      '2002:7f00:1::',
      '2002:c0a8:101::1',
    ]) {
      assert.equal(isRefusedAddress(a), true, a);
    }
    for (const a of [
      '93.184.216.34',
      '8.8.8.8',
      '172.32.0.1',
      '100.128.0.1',
      '2606:4700::1111',
      '::ffff:8.8.8.8',
      '2002:808:808::1',
    ]) {
      assert.equal(isRefusedAddress(a), false, a);
    }
  });

  it('regression: decodes every IPv4-embedding IPv6 form (translated, compatible, NAT64 local-use, 6to4, Teredo)', () => {
    /* ipv4-embedding-forms: ::ffff:0:a.b.c.d (IPv4-translated, RFC 2765/6052) passed, so
       http://[::ffff:0:127.0.0.1]/ was a valid endpoint; now every form docs/api.md §19 names is
       decoded and the IPv4 ranges apply to what it carries, at create and at delivery. */
    for (const a of [
      '::ffff:0:127.0.0.1',
      '::ffff:0:7f00:1',
      '::ffff:0:10.0.0.1',
      '::ffff:0:169.254.169.254',
      '::127.0.0.1',
      '::10.0.0.1',
      '::a9fe:a9fe',
      '64:ff9b::169.254.169.254',
      '64:ff9b:1::7f00:1', // 127.0.0.1, local-use NAT64 with a /96 prefix
      '64:ff9b:1:a9fe:a9:fe00::', // 169.254.169.254 under a /48 prefix (the u octet skipped)
      '64:ff9b:1:0:a:0:100::', // 10.0.0.1 under a /64 prefix
      '64:ff9b:2::8.8.8.8', // 64:ff9b::/32 outside the two allocated prefixes
      '2002:a9fe:a9fe::1',
      '2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo, client 127.0.0.1 (inverted)
      '2001:0:a00:1::8.8.8.8', // Teredo, server 10.0.0.1
    ]) {
      assert.equal(isRefusedAddress(a), true, a);
    }
    for (const a of [
      '::ffff:0:8.8.8.8',
      '::8.8.8.8',
      '64:ff9b::8.8.8.8',
      '64:ff9b:1::808:808',
      '2001:0:4136:e378:8000:63bf:f7f7:f7f7', // Teredo, server 65.54.227.120, client 8.8.8.8
    ]) {
      assert.equal(isRefusedAddress(a), false, a);
    }
    const strict = { allowHttp: true, allowPrivate: false };
    for (const u of [
      'http://[::ffff:0:127.0.0.1]/',
      'http://[::127.0.0.1]/',
      'https://[64:ff9b:1::a9fe:a9fe]/',
      'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
    ]) {
      assert.match(String(urlProblem(u, strict)), /private/, u);
    }
  });

  it('checks URLs at create: https only, no userinfo, no literal private address', () => {
    const strict = { allowHttp: false, allowPrivate: false };
    assert.equal(urlProblem('https://hooks.example.com/x', strict), null);
    assert.match(String(urlProblem('http://hooks.example.com/x', strict)), /https/);
    assert.match(String(urlProblem('https://u:p@hooks.example.com/', strict)), /user name/);
    for (const u of [
      'https://127.0.0.1/',
      'https://[::1]/',
      'https://[::ffff:10.0.0.1]/',
      'https://2130706433/',
      'https://0x7f.1/',
    ]) {
      assert.match(String(urlProblem(u, strict)), /private/, u);
    }
    assert.equal(urlProblem('http://127.0.0.1:9/', { allowHttp: true, allowPrivate: true }), null);
  });

  it('schedules retries 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then 2 h, each ±20%', () => {
    const bases = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 7_200_000];
    bases.forEach((base, i) => {
      assert.equal(
        retryDelayMs(i + 1, () => 0),
        base * 0.8,
      );
      assert.equal(
        retryDelayMs(i + 1, () => 1),
        base * 1.2,
      );
      assert.equal(
        retryDelayMs(i + 1, () => 0.5),
        base,
      );
    });
  });
});

for (const dialect of DIALECTS) {
  describe(`webhooks admin API [${dialect}]`, () => {
    let t: TestApp;
    let headers: { authorization: string };
    before(async () => {
      // No WEBHOOK_ALLOW_*: the defaults a deployment has.
      t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
      headers = await adminHeaders(t);
    });
    after(() => t.destroy());

    it('creates (201, secret once, Location), lists, gets, updates and deletes an endpoint', async () => {
      const created = await createEndpoint(t, headers, 'https://hooks.example.com/in', [
        'user.created',
        'session.created',
      ]);
      assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      // Audited (who added an endpoint that receives account events), never with the secret.
      const entries = await t.ctx.db
        .selectFrom('audit_log')
        .selectAll()
        .where('target_id', '=', created.id)
        .execute();
      assert.deepEqual(
        entries.map((e) => e.action),
        ['webhook.create'],
      );
      assert.equal(entries[0]?.details.includes(created.secret), false);
      const list = json<{ data: Array<Record<string, unknown>> }>(
        await t.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers }),
      );
      assert.deepEqual(Object.keys(list.data[0] ?? {}).sort(), [
        'created_at',
        'description',
        'disabled_reason',
        'enabled',
        'events',
        'id',
        'url',
      ]);
      const res = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/webhooks/${created.id}`,
        headers,
        payload: { events: ['*'], enabled: false, description: 'CRM' },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json(res), {
        ...json(await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${created.id}`, headers })),
      });
      assert.equal(json(res).enabled, false);
      // An admin's switch-off is told apart from the 5-day auto-disable (the console's notice).
      assert.equal(json(res).disabled_reason, 'admin');
      assert.equal(list.data[0]?.disabled_reason, null);
      assert.equal(json(res).description, 'CRM');
      assert.equal(
        (await t.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${created.id}`, headers })).statusCode,
        204,
      );
      const gone = await t.app.inject({ method: 'GET', url: `/api/v1/webhooks/${created.id}`, headers });
      assert.equal(gone.statusCode, 404);
      assert.equal(json(gone).code, 'webhook_not_found');
      assert.equal(
        json(await t.app.inject({ method: 'GET', url: '/api/v1/webhooks/nope', headers })).code,
        'webhook_not_found',
      );
    });

    it('stores the secret sealed, never in plain text', async () => {
      const { id, secret } = await createEndpoint(t, headers, 'https://hooks.example.com/sealed');
      const row = await t.ctx.db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(JSON.stringify(row).includes(secret.slice(6, 30)), false);
      assert.match(row.secret_box, /^v1\./);
    });

    it('refuses at create and update (400 validation_failed): http, userinfo, a literal private address, unknown events', async () => {
      const { id } = await createEndpoint(t, headers, 'https://hooks.example.com/ok');
      for (const payload of [
        { url: 'http://hooks.example.com/', events: ['*'] },
        { url: 'https://user:pw@hooks.example.com/', events: ['*'] },
        { url: 'https://127.0.0.1/', events: ['*'] },
        { url: 'https://[::ffff:169.254.169.254]/', events: ['*'] },
        { url: 'https://[::ffff:0:169.254.169.254]/', events: ['*'] },
        { url: 'https://hooks.example.com/', events: ['user.exploded'] },
        { url: 'https://hooks.example.com/', events: ['*'], secret: 'mine' },
      ]) {
        const res = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers, payload });
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
        assert.equal(json(res).code, 'validation_failed');
      }
      const res = await t.app.inject({
        method: 'PUT',
        url: `/api/v1/webhooks/${id}`,
        headers,
        payload: { url: 'https://10.0.0.5/' },
      });
      assert.equal(res.statusCode, 400);
      assert.equal(json(res).code, 'validation_failed');
    });

    it('is for admins only', async () => {
      const user = await createUser(t);
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/v1/webhooks',
        headers: await authHeaders(t, user),
      });
      assert.equal(res.statusCode, 403);
    });

    it('lists in the index under webhooks in form full', async () => {
      const index = json<{ documentation: Record<string, Record<string, string>> }>(
        await t.app.inject({ method: 'GET', url: '/' }),
      );
      assert.deepEqual(Object.keys(index.documentation.webhooks ?? {}).sort(), [
        'create',
        'delete',
        'deliveries',
        'get',
        'list',
        'retry',
        'secret',
        'test',
        'update',
      ]);
      assert.equal(
        index.documentation.webhooks?.retry,
        'POST /api/v1/webhooks/<id>/deliveries/<delivery_id>/retry',
      );
    });
  });

  describe(`webhooks module in form A [${dialect}]`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp(dialect);
    });
    after(() => t.destroy());

    it('is off: 404 module_disabled and absent from the index', async () => {
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/v1/webhooks',
        headers: await adminHeaders(t),
      });
      assert.equal(res.statusCode, 404);
      assert.equal(json(res).code, 'module_disabled');
      const index = json<{ documentation: Record<string, unknown> }>(
        await t.app.inject({ method: 'GET', url: '/' }),
      );
      assert.equal('webhooks' in index.documentation, false);
    });
  });
}
