import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { NOTICES, type NoticeKind } from '../../src/platform/mail/notices.ts';

/*
 * notice-keys-built-at-run-time: a notice's message keys are built from its kind and paragraph
 * number (`mail.notice.<kind>.p<n>`, `.subject`, `.label`), so the type check cannot see them. Every
 * kind's keys must exist in English's catalog (the other nine are checked against English by
 * test/i18n/catalogs.test.ts), and no catalog key may be left that no notice uses.
 */
const english = JSON.parse(readFileSync(new URL('../../locales/en.json', import.meta.url), 'utf8')) as Record<
  string,
  string
>;

describe('security notices: every key a notice builds is in the catalogs', () => {
  for (const kind of Object.keys(NOTICES) as NoticeKind[]) {
    it(`${kind}: subject, each paragraph and the link's label`, () => {
      const spec = NOTICES[kind];
      const expected = [
        `mail.notice.${kind}.subject`,
        ...spec.paragraphs({ newEmail: 'new@example.com' }).map((_, i) => `mail.notice.${kind}.p${i + 1}`),
        ...('linkLabel' in spec ? [`mail.notice.${kind}.label`] : []),
      ];
      for (const key of expected) assert.ok(key in english, `${key} is missing from locales/en.json`);
      const present = Object.keys(english).filter((key) => key.startsWith(`mail.notice.${kind}.`));
      assert.deepEqual(present.sort(), [...expected].sort(), 'no key of this notice is left unused');
    });
  }
});
