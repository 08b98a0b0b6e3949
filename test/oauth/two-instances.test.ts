import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/databases.ts';
import { freePort } from '../support/service-process.ts';
import { type OauthStack, startOauthApp } from './support.ts';

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

// docs/api.md §17 with two instances on one PostgreSQL: one issuer, one key set, one storage.
describe('oauth on two instances sharing one PostgreSQL', {
  skip: !DIALECTS.includes('postgres') && 'PostgreSQL only (TEST_DATABASE_URL)',
}, () => {
  let a: OauthStack;
  let b: TestApp;
  let bOrigin: string;
  let client: { client_id: string; client_secret: string };

  before(async () => {
    a = await startOauthApp('postgres');
    b = await a.t.restart();
    const port = await freePort();
    await b.app.listen({ port, host: 'localhost' });
    bOrigin = `http://localhost:${port}`;
    const res = await a.admin('POST', '/api/v1/clients', {
      name: 'Job',
      grant_types: ['client_credentials'],
    });
    client = res.body as typeof client;
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  it('a token issued by one instance is introspected and revoked on the other; both publish the same keys', async () => {
    const form = (body: Record<string, string>) => ({
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(client.client_id, client.client_secret),
      },
      body: new URLSearchParams(body).toString(),
    });
    const issued = (await (
      await fetch(`${a.origin}/oauth2/token`, form({ grant_type: 'client_credentials' }))
    ).json()) as {
      access_token: string;
    };
    const onB = (await (
      await fetch(`${bOrigin}/oauth2/introspect`, form({ token: issued.access_token }))
    ).json()) as {
      active: boolean;
    };
    assert.equal(onB.active, true);
    assert.equal((await fetch(`${bOrigin}/oauth2/revoke`, form({ token: issued.access_token }))).status, 200);
    const onA = (await (
      await fetch(`${a.origin}/oauth2/introspect`, form({ token: issued.access_token }))
    ).json()) as {
      active: boolean;
    };
    assert.equal(onA.active, false);
    const kids = async (origin: string) =>
      (
        (await (await fetch(`${origin}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> }
      ).keys
        .map((k) => k.kid)
        .sort();
    assert.deepEqual(await kids(bOrigin), await kids(a.origin));
    const issuer = async (origin: string) =>
      ((await (await fetch(`${origin}/.well-known/openid-configuration`)).json()) as { issuer: string })
        .issuer;
    assert.equal(await issuer(bOrigin), a.origin);
  });
});
