import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BUILT_IN,
  lookupOne,
  negotiate,
  parseAcceptLanguage,
  textDirection,
} from '../../src/platform/i18n/index.ts';

const tags = [...BUILT_IN];
const pick = (hints: Parameters<typeof negotiate>[0], fallback = 'en') => negotiate(hints, tags, fallback);

describe('language negotiation (API §24, settled order and fallbacks)', () => {
  it('the order: ui_locales, ?lang=, the cookie, the user locale, Accept-Language, DEFAULT_LOCALE', () => {
    const all = { uiLocales: 'ja', query: 'fr', cookie: 'de', userLocale: 'es', acceptLanguage: 'it' };
    assert.equal(pick(all), 'ja');
    assert.equal(pick({ ...all, uiLocales: null }), 'fr');
    assert.equal(pick({ ...all, uiLocales: null, query: null }), 'de');
    assert.equal(pick({ ...all, uiLocales: null, query: null, cookie: null }), 'es');
    assert.equal(pick({ acceptLanguage: 'it' }), 'it');
    assert.equal(pick({}), 'en');
    assert.equal(pick({}, 'nl'), 'nl');
    // A hint naming nothing served passes to the next rule rather than stopping there.
    assert.equal(pick({ uiLocales: 'sw', query: 'xx-invalid!!', cookie: 'de' }), 'de');
  });

  it('ui_locales is a space-separated preference list', () => {
    assert.equal(pick({ uiLocales: 'sw fr-CA de' }), 'fr');
    assert.equal(pick({ uiLocales: '  zh-Hant  ar ' }), 'ar');
  });

  it('Accept-Language: q-values honoured, equal q keeps the header order, q=0 and * dropped', () => {
    assert.deepEqual(parseAcceptLanguage('de;q=0.5, fr, ja;q=0.9'), ['fr', 'ja', 'de']);
    assert.deepEqual(parseAcceptLanguage('nl;q=0.8, it;q=0.8'), ['nl', 'it']);
    assert.deepEqual(parseAcceptLanguage('fr;q=0, *, es'), ['es']);
    assert.equal(pick({ acceptLanguage: 'sw, de-AT;q=0.7, fr;q=0.6' }), 'de');
    assert.equal(pick({ acceptLanguage: 'da, sv;q=0.9' }), 'en');
  });

  it('the settled fallbacks by RFC 4647 lookup', () => {
    const cases: Array<[string, string | null]> = [
      ['de-CH', 'de'],
      ['de-ch', 'de'],
      ['fr-CA', 'fr'],
      ['es-419', 'es'],
      ['pt', 'pt-BR'],
      ['pt-PT', 'pt-BR'],
      ['pt-BR', 'pt-BR'],
      ['zh', 'zh-Hans'],
      ['zh-CN', 'zh-Hans'],
      ['zh-SG', 'zh-Hans'],
      ['zh-Hans-CN', 'zh-Hans'],
      ['zh-Hant', null],
      ['zh-TW', null],
      ['zh-HK', null],
      ['zh-Hant-TW', null],
      ['ar-EG', 'ar'],
      ['ja-JP', 'ja'],
      ['en-GB', 'en'],
      ['sw', null],
      ['', null],
      ['not a tag', null],
    ];
    for (const [range, expected] of cases) assert.equal(lookupOne(range, tags), expected, range);
    // Unsupported ones fall to DEFAULT_LOCALE, whatever it is.
    assert.equal(pick({ acceptLanguage: 'zh-TW' }, 'fr'), 'fr');
  });

  it('Arabic is right to left, the others left to right', () => {
    for (const tag of tags) assert.equal(textDirection(tag), tag === 'ar' ? 'rtl' : 'ltr', tag);
    assert.equal(textDirection('he'), 'rtl');
    assert.equal(textDirection('fa-IR'), 'rtl');
  });
});
