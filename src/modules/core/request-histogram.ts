/**
 * The request-duration histogram, kept in plain arrays and written in the Prometheus text format
 * (0.0.4) at scrape time. prom-client's Histogram rebuilds and hashes the label set on every
 * observe, even through a cached child: about half a microsecond, a twentieth of a /health request
 * (docs/benchmarks.md). Here an observation is one Map get and a bucket walk; every other metric
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
  const series = new Map<string, Series>();
  return {
    observe(method, route, status, seconds) {
      const key = `${method} ${status} ${route}`;
      let s = series.get(key);
      if (s === undefined) {
        s = {
          labels: `method="${labelValue(method)}",route="${labelValue(route)}",status_code="${status}"`,
          counts: new Float64Array(bounds.length + 1),
          sum: 0,
          count: 0,
        };
        series.set(key, s);
      }
      let i = 0;
      while (i < bounds.length && seconds > (bounds[i] as number)) i++;
      s.counts[i] = (s.counts[i] as number) + 1;
      s.sum += seconds;
      s.count++;
    },
    render() {
      const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
      for (const s of series.values()) {
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
