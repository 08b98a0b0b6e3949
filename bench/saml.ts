// The SAML row of docs/benchmarks.md: signed assertions consumed per second at the assertion
// consumer (POST /saml/<name>/acs), against a Gatehouse pinned to one core (bench/run.ts --saml
// starts it on SERVER_CPU and runs this loader on LOAD_CPU). Every assertion ID is single use, so
// the responses are signed ahead by the samlify IdP of the tests (IdP-initiated, the connection
// allowing it), before the clock starts; the server is idle meanwhile. Two phases: first sign-ins
// (each creates its person), then returning people (the steady state). Target: ≥ 300/s per core.
//   node bench/saml.ts <base url> <admin token> [people = 400] [returning sign-ins = 3000] [in flight = 8]
import { createSamlIdp } from '../test/support/saml-idp.ts';

// samlify warns on every IdP it constructs (no SingleLogoutService): one line per signed response.
const warn = console.warn;
console.warn = (...args: unknown[]) => {
  if (!String(args[0]).includes('SingleLogoutService')) warn(...args);
};

const [base = '', token = '', peopleArg = '400', returningArg = '3000', flightArg = '8'] =
  process.argv.slice(2);
const PEOPLE = Number(peopleArg);
const RETURNING = Number(returningArg);
const IN_FLIGHT = Number(flightArg);
const err = (line: string) => process.stderr.write(`bench/saml: ${line}\n`);

const idp = createSamlIdp('https://idp.bench.example/saml');
const created = await fetch(`${base}/api/v1/idp/providers`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  body: JSON.stringify({
    name: 'bench',
    kind: 'saml',
    domains: ['bench.example'],
    idp_metadata_xml: idp.metadataXml,
    saml: { allow_idp_initiated: true },
  }),
});
if (created.status !== 201)
  throw new Error(`creating the connection answered ${created.status}: ${await created.text()}`);
const spMetadata = await (await fetch(`${base}/saml/bench/metadata`)).text();

/** `count` fresh signed responses, the people taken in turn. */
async function prepare(count: number): Promise<string[]> {
  const bodies: string[] = [];
  for (let i = 0; i < count; i++) {
    const email = `p-${i % PEOPLE}@bench.example`;
    const { SAMLResponse } = await idp.respond(spMetadata, { location: null, user: { nameId: email } });
    bodies.push(new URLSearchParams({ SAMLResponse }).toString());
  }
  return bodies;
}

interface Phase {
  consumed: number;
  refused: number;
  /** The statuses of what was not consumed (a 302 is a refusal, a 503 the pressure guard). */
  others: Record<string, number>;
  perS: number;
  p50Ms: number;
  p99Ms: number;
}

/** Posts every body once, IN_FLIGHT at a time; a 200 is a consumed assertion, a 302 a refusal. */
async function post(bodies: string[]): Promise<Phase> {
  const latencies: number[] = [];
  let next = 0;
  let consumed = 0;
  let refused = 0;
  const others: Record<string, number> = {};
  const started = performance.now();
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= bodies.length) return;
      const t0 = performance.now();
      const res = await fetch(`${base}/saml/bench/acs`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: bodies[i],
        redirect: 'manual',
      });
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (res.status === 200) consumed++;
      else {
        refused++;
        others[res.status] = (others[res.status] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Number((latencies[Math.floor(q * (latencies.length - 1))] ?? 0).toFixed(2));
  return { consumed, refused, others, perS: Math.round(consumed / seconds), p50Ms: at(0.5), p99Ms: at(0.99) };
}

err(`signing ${PEOPLE} first sign-ins ahead`);
const firstBodies = await prepare(PEOPLE);
const first = await post(firstBodies);
err(`signing ${RETURNING} returning sign-ins ahead`);
const returningBodies = await prepare(RETURNING);
const returning = await post(returningBodies);
process.stdout.write(`${JSON.stringify({ first, returning, inFlight: IN_FLIGHT })}\n`);
