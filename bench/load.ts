// The load generator: runs one or more autocannon loads at once (in its own process, pinned to
// its own CPU by bench/run.ts) and prints one JSON line with the results.
import { createHistogram } from 'node:perf_hooks';
import autocannon from 'autocannon';

/** One load of a scenario; several in one spec run concurrently (e.g. /health under a login storm). */
export interface LoadSpec {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** One body per connection, in turn (e.g. each connection logging in as its own user). */
  bodies?: string[];
  connections: number;
  durationS: number;
  warmupS: number;
  /** Requests per second over all connections; absent = as fast as the server answers. */
  overallRate?: number;
}

/** What one load measured (2xx only for latency, as autocannon does). */
export interface LoadResult {
  name: string;
  connections: number;
  durationS: number;
  /** 2xx responses per second. */
  rps: number;
  /** All responses per second. */
  allRps: number;
  /** Latency of 2xx responses in milliseconds, microsecond precision. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  statusCounts: Record<string, number>;
  errors: number;
  timeouts: number;
}

/** autocannon's per-connection set-up: each new connection takes the next body. */
function bodyPerClient(bodies: string[]) {
  let next = 0;
  return (client: { setBody(body: string): void }) => {
    client.setBody(bodies[next++ % bodies.length] as string);
  };
}

async function runOne(spec: LoadSpec): Promise<LoadResult> {
  const base = {
    url: spec.url,
    method: spec.method ?? 'GET',
    headers: { ...(spec.body ? { 'content-type': 'application/json' } : {}), ...spec.headers },
    ...(spec.body ? { body: spec.body } : {}),
    connections: spec.connections,
    ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
    ...(spec.bodies ? { setupClient: bodyPerClient(spec.bodies) } : {}),
    timeout: 30,
  };
  if (spec.warmupS > 0) {
    await autocannon({ ...base, duration: spec.warmupS });
    // The warm-up's last requests are abandoned, not finished: logins among them still hash (and
    // fill the hashing queue, so the measured run would start with 503s). Let them drain first.
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // autocannon's own histogram has 1 ms buckets; /health answers in tens of microseconds.
  const latencyUs = createHistogram();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ ...base, duration: spec.durationS }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
    instance.on('response', (_client, statusCode: number, _bytes: number, responseTimeMs: number) => {
      if (statusCode >= 200 && statusCode < 300)
        latencyUs.record(Math.max(1, Math.round(responseTimeMs * 1000)));
    });
  });
  const statusCounts: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {}))
    statusCounts[code] = count ?? 0;
  const ok = result['2xx'];
  const all = Object.values(statusCounts).reduce((a, b) => a + b, 0);
  const ms = (us: number) => Math.round(us) / 1000;
  return {
    name: spec.name,
    connections: spec.connections,
    durationS: result.duration,
    rps: ok / result.duration,
    allRps: all / result.duration,
    p50Ms: latencyUs.count > 0 ? ms(latencyUs.percentile(50)) : Number.NaN,
    p99Ms: latencyUs.count > 0 ? ms(latencyUs.percentile(99)) : Number.NaN,
    maxMs: latencyUs.count > 0 ? ms(latencyUs.max) : Number.NaN,
    statusCounts,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

const specs = JSON.parse(process.argv[2] ?? '[]') as LoadSpec[];
const results = await Promise.all(specs.map(runOne));
// The generator's own CPU time: near 100% of the run would mean it, not the server, set the pace.
const { userCPUTime, systemCPUTime } = process.resourceUsage();
process.stdout.write(`${JSON.stringify({ results, cpuS: (userCPUTime + systemCPUTime) / 1e6 })}\n`);
