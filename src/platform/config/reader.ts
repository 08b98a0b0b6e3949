import { quoted } from '../quoted.ts';
/** A configuration problem: its message is the one line printed before the process exits. */
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
}

const TRUE_WORDS = ['true', '1', 'yes', 'on'];
const FALSE_WORDS = ['false', '0', 'no', 'off'];

export function envReader(env: Env): EnvReader {
  const str = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  return {
    str,
    int(name, def, min, max) {
      const raw = str(name);
      if (raw === undefined) return def;
      if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got ${quoted(raw)}`);
      const n = Number(raw);
      if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
      return n;
    },
    bool(name, def) {
      const raw = str(name);
      if (raw === undefined) return def;
      const value = booleanWord(raw.toLowerCase());
      if (value === undefined) throw new ConfigError(`${name} must be true or false, got ${quoted(raw)}`);
      return value;
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
