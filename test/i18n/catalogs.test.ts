import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { IntlMessageFormat } from 'intl-messageformat';
import { BUILT_IN, messageArguments, messageProblem } from '../../src/platform/i18n/index.ts';

const catalog = (tag: string): Record<string, string> =>
  JSON.parse(readFileSync(new URL(`../../locales/${tag}.json`, import.meta.url), 'utf8'));
const english = catalog('en');

/** The plural arguments of an ICU message with the categories (not `=n`) each one lists. */
function plurals(message: string): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const walk = (
    elements: readonly { type: number; value?: string; options?: Record<string, { value: unknown[] }> }[],
  ) => {
    for (const el of elements) {
      if (el.type === 6 && el.options) {
        found.set(el.value as string, new Set(Object.keys(el.options).filter((k) => !k.startsWith('='))));
      }
      for (const option of Object.values(el.options ?? {})) walk(option.value as never);
    }
  };
  walk(astOf(message) as never);
  return found;
}

const astOf = (message: string) => new IntlMessageFormat(message, 'en').getAst();

describe('the built-in catalogs (API §24)', () => {
  it('English is flat dotted keys of valid ICU messages', () => {
    for (const [key, message] of Object.entries(english)) {
      assert.match(key, /^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)+$/, key);
      assert.equal(typeof message, 'string', key);
      assert.doesNotThrow(() => messageArguments(message), key);
    }
  });

  for (const tag of BUILT_IN) {
    it(`${tag}: every English message is there, no other, with exactly English's arguments`, () => {
      const messages = catalog(tag);
      const missing = Object.keys(english).filter((k) => !Object.hasOwn(messages, k));
      assert.deepEqual(missing, [], `${tag} lacks messages`);
      const extra = Object.keys(messages).filter((k) => !Object.hasOwn(english, k));
      assert.deepEqual(extra, [], `${tag} has keys English has not`);
      for (const [key, message] of Object.entries(messages)) {
        assert.equal(messageProblem(english[key] as string, message), null, `${tag}: ${key}`);
      }
    });

    it(`${tag}: every message that shows a count is a plural with every CLDR category of ${tag}`, () => {
      const categories = new Intl.PluralRules(tag).resolvedOptions().pluralCategories;
      const messages = catalog(tag);
      for (const [key, englishMessage] of Object.entries(english)) {
        for (const argument of plurals(englishMessage).keys()) {
          const found = plurals(messages[key] as string).get(argument);
          assert.ok(found, `${tag}: ${key}: {${argument}} must be a plural`);
          for (const category of categories)
            assert.ok(found.has(category), `${tag}: ${key}: lacks "${category}"`);
        }
      }
    });
  }

  it('a count shown outside a plural is refused: every {count}/{n} is a plural argument', () => {
    for (const [key, message] of Object.entries(english)) {
      const counts = messageArguments(message).filter((a) => /^(count|n)$|_count$/.test(a));
      for (const argument of counts) assert.ok(plurals(message).has(argument), `${key}: {${argument}}`);
    }
  });

  it('a translation whose arguments differ from English is named', () => {
    assert.equal(messageProblem('Hello {name}', 'Hallo {name}'), null);
    assert.match(
      String(messageProblem('Hello {name}', 'Hallo {nom}')),
      /arguments \{nom\}, English uses \{name\}/,
    );
    assert.match(String(messageProblem('Hello {name}', 'Hallo {name')), /not valid ICU/);
  });
});

describe('docs/languages.md', () => {
  it('lists every message key as scripts/locale-keys.mjs writes it', async () => {
    const { keyList } = await import('../../scripts/locale-keys.mjs');
    const doc = readFileSync(new URL('../../docs/languages.md', import.meta.url), 'utf8');
    assert.ok(doc.includes(keyList(english)), 'run `node scripts/locale-keys.mjs`');
  });
});
