import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/platform/config.ts';
import { loadLanguages } from '../../src/platform/i18n/index.ts';
import { testEnv } from '../helpers/app.ts';

const root = mkdtempSync(join(tmpdir(), 'gatehouse-locales-'));
let n = 0;
/** A LOCALES_DIR holding these files (name → content). */
function dir(files: Record<string, string>): string {
  const d = join(root, String(n++));
  mkdirSync(d);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(d, name), content);
  return d;
}
const load = (localesDir: string | null, defaultLocale = 'en') =>
  loadLanguages({ localesDir, defaultLocale });
const refusal = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    assert.doesNotMatch(err.message, /\n/, 'one line');
    return err.message;
  }
  assert.fail('expected a ConfigError');
};

describe('LOCALES_DIR and DEFAULT_LOCALE (API §24: checked at start, one line naming file and key)', () => {
  after(() => rmSync(root, { recursive: true, force: true }));

  it('an override replaces one message; a partial file falls back to DEFAULT_LOCALE, then English', () => {
    const d = dir({ 'de.json': JSON.stringify({ 'shell.language': 'Sprache wählen' }) });
    const languages = load(d);
    assert.equal(languages.t('de', 'shell.language'), 'Sprache wählen');
    assert.equal(languages.t('de', 'shell.skip'), 'Zum Inhalt springen');
  });

  it('a new language is added and may be DEFAULT_LOCALE; what it lacks comes from English', () => {
    const d = dir({ 'sv.json': JSON.stringify({ 'shell.skip': 'Hoppa till innehållet' }) });
    const languages = load(d, 'sv');
    assert.ok(languages.tags.includes('sv'));
    assert.equal(languages.defaultLocale, 'sv');
    assert.equal(languages.t('sv', 'shell.skip'), 'Hoppa till innehållet');
    assert.equal(languages.t('sv', 'shell.language'), 'Language');
    assert.equal(languages.negotiate({ acceptLanguage: 'sv-SE' }), 'sv');
  });

  it('an unknown key, an ICU syntax error, other arguments, bad JSON: one line naming file and key', () => {
    const unknown = dir({ 'fr.json': JSON.stringify({ 'shell.nope': 'x' }) });
    assert.match(
      refusal(() => load(unknown)),
      /^LOCALES_DIR: .*fr\.json: shell\.nope: unknown key/,
    );
    const broken = dir({ 'fr.json': JSON.stringify({ 'page.sign-in.sign_in_to_app': 'Connexion à {app' }) });
    assert.match(
      refusal(() => load(broken)),
      /^LOCALES_DIR: .*fr\.json: page\.sign-in\.sign_in_to_app: not valid ICU MessageFormat/,
    );
    const args = dir({
      'fr.json': JSON.stringify({ 'page.sign-in.sign_in_to_app': 'Connexion à {produit}' }),
    });
    assert.match(
      refusal(() => load(args)),
      /^LOCALES_DIR: .*fr\.json: page\.sign-in\.sign_in_to_app: uses the arguments \{produit\}, English uses \{app\}$/,
    );
    const json = dir({ 'fr.json': '{ "shell.skip": ' });
    assert.match(
      refusal(() => load(json)),
      /^LOCALES_DIR: .*fr\.json: -: not valid JSON/,
    );
    const name = dir({ 'not a tag!.json': '{}' });
    assert.match(
      refusal(() => load(name)),
      /not a tag!\.json: -: the file name is not a BCP 47 language tag/,
    );
  });

  it('an unreadable directory stops the start', () => {
    assert.match(
      refusal(() => load(join(root, 'missing'))),
      /^LOCALES_DIR: .*missing: -: the directory cannot be read \(ENOENT\)$/,
    );
  });

  it('DEFAULT_LOCALE must name a built-in language or one LOCALES_DIR adds', () => {
    assert.match(
      refusal(() => load(null, 'sv')),
      /^DEFAULT_LOCALE must name a built-in language .*got "sv"/,
    );
    assert.throws(
      () => loadConfig(testEnv('sqlite::memory:', { DEFAULT_LOCALE: 'not a tag' })),
      /DEFAULT_LOCALE must be a BCP 47/,
    );
    assert.equal(loadConfig(testEnv('sqlite::memory:', { DEFAULT_LOCALE: 'pt-br' })).defaultLocale, 'pt-BR');
  });
});
