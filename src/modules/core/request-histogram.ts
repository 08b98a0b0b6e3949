/**
 * The request-duration histogram, kept in plain arrays and written in the Prometheus text format
 * (0.0.4) at scrape time. prom-client's Histogram rebuilds and hashes the label set on every
 * observe, even through a cached child: about half a microsecond, a twentieth of a /health request
 * (docs/benchmarks.md). Here an observation is three Map gets and a bucket walk; every other metric
 * stays with prom-client.
 */
export interface RequestHistogram {
  observe(method: string, route: string, status: number, seconds: number): void;
  /** The exposition lines (HELP, TYPE, then every series' buckets, sum and count). */
  render(): string;
}

interface Series {
  labels: string;
  /** Observations at or under each bound (not yet cumulative); the last slot is over every bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export function createRequestHistogram(
  name: string,
  help: string,
  buckets: readonly number[],
): RequestHistogram {
  const bounds = [...buckets].sort((a, b) => a - b);
  // Looked up by route, then method, then status: those strings are the route table's and the
  // HTTP parser's own, with their hashes cached, where one joined key string would be built and
  // hashed anew on every response. `all` keeps the series in the order they first appeared.
  const byRoute = new Map<string, Map<string, Map<number, Series>>>();
  const all: Series[] = [];
  const seriesFor = (method: string, route: string, status: number): Series => {
    let byMethod = byRoute.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      byRoute.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let s = byStatus.get(status);
    if (s === undefined) {
      s = {
        labels: `method="${labelValue(method)}",route="${labelValue(route)}",status_code="${status}"`,
        counts: new Float64Array(bounds.length + 1),
        sum: 0,
        count: 0,
      };
      byStatus.set(status, s);
      all.push(s);
    }
    return s;
  };
  return {
    observe(method, route, status, seconds) {
      const s = seriesFor(method, route, status);
      let i = 0;
      while (i < bounds.length && seconds > (bounds[i] as number)) i++;
      s.counts[i] = (s.counts[i] as number) + 1;
      s.sum += seconds;
      s.count++;
    },
    render() {
      const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
      for (const s of all) {
        let cumulative = 0;
        bounds.forEach((bound, i) => {
          cumulative += s.counts[i] as number;
          lines.push(`${name}_bucket{le="${bound}",${s.labels}} ${cumulative}`);
        });
        lines.push(`${name}_bucket{le="+Inf",${s.labels}} ${s.count}`);
        lines.push(`${name}_sum{${s.labels}} ${s.sum}`);
        lines.push(`${name}_count{${s.labels}} ${s.count}`);
      }
      return `${lines.join('\n')}\n`;
    },
  };
}

/** Label values escape backslash, double quote and newline (the text format's rule). */
function labelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
