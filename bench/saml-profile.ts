// Where an assertion's time goes at the ACS (docs/benchmarks.md, "SAML"): CPU time per assertion,
// in one process (app.inject, no HTTP), of node-saml's verification alone and of the whole
// consumer (Gatehouse's checks, the replay record, the account, the session, the audit entry).
// CPU time, not wall time: on a shared machine it is the figure that says what one core can do.
//   node bench/saml-profile.ts [database url, default a temporary SQLite file] [assertions = 300]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireSamlConnection } from '../src/modules/providers/index.ts';
import { samlFor } from '../src/modules/providers/saml/saml-sp.ts';
import { buildTestApp } from '../test/helpers/app.ts';
import { authHeaders, firstAdmin } from '../test/helpers/users.ts';
import { createSamlIdp } from '../test/support/saml-idp.ts';

const warn = console.warn;
console.warn = (...args: unknown[]) => {
  if (!String(args[0]).includes('SingleLogoutService')) warn(...args);
};
const [url, countArg = '300'] = process.argv.slice(2);
const COUNT = Number(countArg);
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-saml-profile-'));
const dialect = url?.startsWith('postgres') ? 'postgres' : 'sqlite';
if (url) process.env.TEST_DATABASE_URL = url;
const t = await buildTestApp(dialect, { env: { API_FORM: 'full' } });
try {
  const admin = await authHeaders(t, await firstAdmin(t));
  const idp = createSamlIdp('https://idp.bench.example/saml');
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/v1/idp/providers',
    headers: admin,
    payload: {
      name: 'bench',
      kind: 'saml',
      domains: ['bench.example'],
      idp_metadata_xml: idp.metadataXml,
      saml: { allow_idp_initiated: true },
    },
  });
  if (created.statusCode !== 201) throw new Error(created.body);
  const sp = (await t.app.inject({ url: '/saml/bench/metadata' })).body;
  const sign = async (n: number, people: number) => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      out.push(
        (await idp.respond(sp, { location: null, user: { nameId: `p-${i % people}@bench.example` } }))
          .SAMLResponse,
      );
    }
    return out;
  };
  const post = (SAMLResponse: string) =>
    t.app.inject({
      method: 'POST',
      url: '/saml/bench/acs',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ SAMLResponse }).toString(),
    });
  // Warm up: every person signs in once (provisioned), the code paths get compiled.
  for (const body of await sign(50, 50)) await post(body);
  const connection = await requireSamlConnection(t.ctx, 'bench');
  const settings = connection.saml;
  if (!settings) throw new Error('not a SAML connection');
  const verifyBodies = await sign(COUNT, 50);
  const acsBodies = await sign(COUNT, 50);
  const cpuMs = async (run: () => Promise<void>) => {
    const before = process.cpuUsage();
    await run();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000 / COUNT;
  };
  const verify = await cpuMs(async () => {
    for (const SAMLResponse of verifyBodies) {
      await samlFor(t.ctx, 'bench', settings).validatePostResponseAsync({ SAMLResponse });
    }
  });
  let refused = 0;
  const acs = await cpuMs(async () => {
    for (const body of acsBodies) if ((await post(body)).statusCode !== 200) refused++;
  });
  process.stdout.write(
    `${JSON.stringify({
      dialect,
      nodeSamlVerifyCpuMs: Number(verify.toFixed(2)),
      acsCpuMs: Number(acs.toFixed(2)),
      acsPerCorePerS: Math.round(1000 / acs),
      refused,
    })}\n`,
  );
} finally {
  await t.destroy();
  rmSync(dir, { recursive: true, force: true });
}
