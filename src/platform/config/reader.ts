import { quoted } from '../quoted.ts';
/** Configuration problems: its message holds one line per problem, printed before the process exits. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type Env = Record<string, string | undefined>;

/** Typed reads of one environment; each refusal is a ConfigError naming the variable. */
export interface EnvReader {
  /** The trimmed value; undefined when unset or blank. */
  str(name: string): string | undefined;
  int(name: string, def: number, min: number, max: number): number;
  bool(name: string, def: boolean): boolean;
  /** `value` itself, once it parses as a URL with one of `protocols`. */
  url(name: string, value: string, protocols: string[]): string;
  /** Records a problem; loading goes on so that one start names every wrong setting. */
  fail(message: string): void;
  /** fn's value, or `fallback` once its ConfigError is recorded. */
  attempt<T>(fn: () => T, fallback: T): T;
  /** Throws one ConfigError listing every problem recorded (one a line), if any. */
  done(): void;
}

const TRUE_WORDS = ['true', '1', 'yes', 'on'];
const FALSE_WORDS = ['false', '0', 'no', 'off'];

export function envReader(env: Env): EnvReader {
  const str = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const problems: string[] = [];
  const fail = (message: string): void => {
    if (!problems.includes(message)) problems.push(message);
  };
  return {
    str,
    // A wrong number or boolean is recorded and its default used, so the checks after it still run.
    int(name, def, min, max) {
      const raw = str(name);
      if (raw === undefined) return def;
      if (!/^\d+$/.test(raw)) {
        fail(`${name} must be a whole number, got ${quoted(raw)}`);
        return def;
      }
      const n = Number(raw);
      if (n < min || n > max) {
        fail(`${name} must be between ${min} and ${max}, got ${n}`);
        return def;
      }
      return n;
    },
    bool(name, def) {
      const raw = str(name);
      if (raw === undefined) return def;
      const value = booleanWord(raw.toLowerCase());
      if (value === undefined) {
        fail(`${name} must be true or false, got ${quoted(raw)}`);
        return def;
      }
      return value;
    },
    fail,
    attempt(fn, fallback) {
      try {
        return fn();
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        for (const line of err.message.split('\n')) fail(line);
        return fallback;
      }
    },
    done() {
      if (problems.length > 0) throw new ConfigError(problems.join('\n'));
    },
    url(name, value, protocols) {
      let parsed: URL;
      try {
        parsed = new URL(value);
      } catch {
        throw new ConfigError(`${name} must be a URL, got ${quoted(redactUrl(value))}`);
      }
      if (!protocols.includes(parsed.protocol)) {
        throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got ${quoted(parsed.protocol)}`);
      }
      return value;
    },
  };
}

/** true/false for the words a boolean setting accepts (lower-case), else undefined. */
export function booleanWord(lower: string): boolean | undefined {
  if (TRUE_WORDS.includes(lower)) return true;
  if (FALSE_WORDS.includes(lower)) return false;
  return undefined;
}

/** The non-empty, trimmed entries of a comma list. */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
}

/** Hides the password of a URL, for messages and logs. */
export function redactUrl(value: string): string {
  return value.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1***@');
}

export function deepFreeze<T extends object>(obj: T): T {
  for (const v of Object.values(obj)) if (v && typeof v === 'object') deepFreeze(v);
  return Object.freeze(obj);
}
