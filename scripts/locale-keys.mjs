// Writes the message key list of docs/languages.md (between its two markers) from locales/en.json:
// `node scripts/locale-keys.mjs` after adding or changing a message. test/i18n/catalogs.test.ts
// fails while the page and the catalog disagree.
import { readFileSync, writeFileSync } from 'node:fs';

const en = JSON.parse(readFileSync(new URL('../locales/en.json', import.meta.url), 'utf8'));
const doc = new URL('../docs/languages.md', import.meta.url);
const BEGIN = '<!-- keys:begin (scripts/locale-keys.mjs) -->';
const END = '<!-- keys:end -->';

export function keyList(messages) {
  const cell = (text) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const rows = Object.entries(messages).map(([key, text]) => `| \`${key}\` | ${cell(text)} |`);
  return [BEGIN, '', '| key | English |', '|---|---|', ...rows, '', END].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = readFileSync(doc, 'utf8');
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < 0) throw new Error('docs/languages.md lacks the key list markers');
  writeFileSync(doc, text.slice(0, start) + keyList(en) + text.slice(end + END.length));
  console.log(`docs/languages.md: ${Object.keys(en).length} keys`);
}
