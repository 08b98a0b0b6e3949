import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IntlMessageFormat } from 'intl-messageformat';
import { ConfigError } from '../config/reader.ts';

/** One language's messages: flat dotted keys → ICU MessageFormat text. */
export type Catalog = Readonly<Record<string, string>>;

/** The built-in languages, English first: English is the source every other catalog follows. */
export const BUILT_IN = ['en', 'de', 'fr', 'es', 'pt-BR', 'it', 'nl', 'ja', 'zh-Hans', 'ar'] as const;

/** locales/ beside src/ (running from source) or beside dist/ (the built service). */
export function localesDirectory(): string {
  for (const up of ['../../../locales', '../../../../locales']) {
    const dir = fileURLToPath(new URL(up, import.meta.url));
    if (existsSync(join(dir, 'en.json'))) return dir;
  }
  throw new Error('the message catalogs directory locales/ is missing next to the service');
}

let builtIn: Map<string, Catalog> | undefined;

/** The built-in catalogs, read once per process (they ship with the release and never change). */
export function builtInCatalogs(): ReadonlyMap<string, Catalog> {
  if (builtIn === undefined) {
    const dir = localesDirectory();
    builtIn = new Map();
    for (const tag of BUILT_IN) {
      const file = join(dir, `${tag}.json`);
      if (existsSync(file)) builtIn.set(tag, JSON.parse(readFileSync(file, 'utf8')) as Catalog);
    }
  }
  return builtIn;
}

/**
 * The names of an ICU message's arguments (`{name}`, `{n, plural, …}`, `<b>` tags), sorted: a
 * translation must use exactly its English message's. Throws on an ICU syntax error.
 */
export function messageArguments(message: string): string[] {
  const names = new Set<string>();
  const walk = (elements: readonly unknown[]) => {
    for (const el of elements as {
      type: number;
      value?: string;
      options?: Record<string, { value: unknown[] }>;
      children?: unknown[];
    }[]) {
      // 0 literal and 7 `#` carry no argument; 8 is a tag, named like an argument.
      if (el.type !== 0 && el.type !== 7 && typeof el.value === 'string')
        names.add(el.type === 8 ? `<${el.value}>` : el.value);
      for (const option of Object.values(el.options ?? {})) walk(option.value);
      if (el.children) walk(el.children);
    }
  };
  walk(new IntlMessageFormat(message, 'en', undefined, { ignoreTag: false }).getAst());
  return [...names].sort();
}

/**
 * What is wrong with `message` as the translation of `english` under `key`, or null: it must parse
 * as ICU and use exactly English's arguments.
 */
export function messageProblem(english: string, message: string): string | null {
  if (typeof message !== 'string') return 'the message is not a string';
  let args: string[];
  try {
    args = messageArguments(message);
  } catch (err) {
    return `not valid ICU MessageFormat (${(err as Error).message})`;
  }
  const expected = messageArguments(english);
  if (args.join(',') !== expected.join(',')) {
    const list = (a: string[]) => (a.length === 0 ? 'none' : a.map((n) => `{${n}}`).join(', '));
    return `uses the arguments ${list(args)}, English uses ${list(expected)}`;
  }
  return null;
}

/**
 * LOCALES_DIR (docs/languages.md): `<tag>.json` files merged over the built-in catalogs, each checked
 * now. Anything wrong stops the start with one line: `LOCALES_DIR: <file>: <key>: <what is wrong>`.
 */
export function operatorCatalogs(dir: string, english: Catalog): Map<string, Catalog> {
  const fail = (file: string, key: string, what: string): never => {
    throw new ConfigError(`LOCALES_DIR: ${file}: ${key}: ${what}`);
  };
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
  } catch (err) {
    return fail(dir, '-', `the directory cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const found = new Map<string, Catalog>();
  for (const name of names) {
    const file = join(dir, name);
    const tag =
      Intl.getCanonicalLocales !== undefined ? canonicalOrNull(name.slice(0, -'.json'.length)) : null;
    if (tag === null) fail(file, '-', 'the file name is not a BCP 47 language tag followed by .json');
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      const what = err instanceof SyntaxError ? `not valid JSON (${err.message})` : 'the file cannot be read';
      return fail(file, '-', what);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return fail(file, '-', 'must be one JSON object of flat dotted keys');
    }
    for (const [key, message] of Object.entries(parsed)) {
      if (!Object.hasOwn(english, key)) fail(file, key, 'unknown key (docs/languages.md lists the keys)');
      const problem = messageProblem(english[key] as string, message as string);
      if (problem !== null) fail(file, key, problem);
    }
    found.set(tag as string, parsed as Catalog);
  }
  return found;
}

function canonicalOrNull(tag: string): string | null {
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}
