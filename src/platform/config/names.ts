import { type Env, loadConfig } from '../config.ts';

/*
 * Which keys of `.env` are settings (docs/configuration.md, "Warnings at start"). The configuration
 * knows every setting name: they are the names loadConfig reads, recorded as it reads them, so a new
 * setting needs no second list.
 */

/** Variables of other programs that a shared `.env` (compose, Node, libpq) legitimately holds. */
const OTHER_PROGRAMS =
  /^(POSTGRES_|PG[A-Z]|COMPOSE_|DOCKER_|NODE_|NPM_|npm_)|^(TZ|UV_THREADPOOL_SIZE|PATH|HOME|LANG)$/;

/** The names loadConfig reads for `env` (and for an empty environment, which reads every default). */
export function settingNames(env: Env = {}): Set<string> {
  const names = new Set<string>();
  const recording = (source: Env): Env =>
    new Proxy(source, {
      get(target, key) {
        if (typeof key === 'string') names.add(key);
        return target[key as string];
      },
    });
  loadConfig(recording({}));
  try {
    loadConfig(recording({ ...env }));
  } catch {
    // Only the names matter here; the real load reports the problem.
  }
  return names;
}

/**
 * The keys of a `.env` file that are no setting, each with the nearest setting name when one is close
 * (a typo: SMTP_ULR → SMTP_URL, smtp_url → SMTP_URL), else null.
 */
export function unknownSettings(
  keys: readonly string[],
  env: Env = {},
): Array<{ name: string; nearest: string | null }> {
  const known = settingNames(env);
  return keys
    .filter((key) => !known.has(key) && !OTHER_PROGRAMS.test(key))
    .map((name) => ({ name, nearest: nearest(name, known) }));
}

function nearest(name: string, known: Set<string>): string | null {
  const upper = name.toUpperCase();
  if (known.has(upper)) return upper;
  let best: string | null = null;
  let bestDistance = Math.max(2, Math.floor(upper.length / 5)) + 1;
  for (const candidate of known) {
    const d = distance(upper, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Edit distance with adjacent transpositions (optimal string alignment). */
function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number) => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, at(i - 2, j - 2) + 1);
      (rows[i] as number[])[j] = d;
    }
  }
  return at(a.length, b.length);
}
