// A load whose every request needs the previous answer: refresh tokens are single use, so each
// connection posts its own token and keeps the one the answer rotates in (bench/sizing.ts). Runs in
// the pinned load-generator process; prints one JSON line.
//   node bench/chain-load.ts '<{"url","field","tokens":[…],"durationS","warmupS","form"?,"authorization"?}>'
interface ChainSpec {
  url: string;
  /** The request field carrying the token, and the answer's field holding the next one. */
  field: string;
  tokens: string[];
  durationS: number;
  warmupS: number;
  /** Send application/x-www-form-urlencoded (OAuth) instead of JSON. */
  form?: Record<string, string>;
  authorization?: string;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as ChainSpec;
let measuring = false;
let stop = false;
let ok = 0;
const statusCounts: Record<string, number> = {};

async function worker(first: string): Promise<void> {
  let token = first;
  while (!stop) {
    const headers: Record<string, string> = spec.authorization ? { authorization: spec.authorization } : {};
    const body = spec.form
      ? new URLSearchParams({ ...spec.form, [spec.field]: token }).toString()
      : JSON.stringify({ [spec.field]: token });
    headers['content-type'] = spec.form ? 'application/x-www-form-urlencoded' : 'application/json';
    const res = await fetch(spec.url, { method: 'POST', headers, body });
    const answer = (await res.json()) as Record<string, unknown>;
    if (measuring) statusCounts[res.status] = (statusCounts[res.status] ?? 0) + 1;
    const next = answer[spec.field];
    if (res.status !== 200 || typeof next !== 'string') throw new Error(`chain broken: ${res.status}`);
    token = next;
    if (measuring) ok++;
  }
}

const workers = spec.tokens.map(worker);
await new Promise((r) => setTimeout(r, spec.warmupS * 1000));
measuring = true;
const t0 = performance.now();
await new Promise((r) => setTimeout(r, spec.durationS * 1000));
measuring = false;
const seconds = (performance.now() - t0) / 1000;
stop = true;
await Promise.all(workers);
process.stdout.write(`${JSON.stringify({ rps: ok / seconds, statusCounts })}\n`);
