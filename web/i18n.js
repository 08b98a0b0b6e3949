// The page's language (docs/languages.md): its messages, formatted here with Intl, and the picker.
// The server chose the language; the page scripts' messages (`js.*`) come as the ICU syntax trees
// intl-messageformat parsed on the server (messages-<tag>.js beside this file, preloaded by the
// page), so this file only walks them and no message parser ships to the page.

/** The page's language: the catalog's tag (`de`, `pt-BR`, `zh-Hans`). */
export const lang = document.documentElement.lang || 'en';

const { default: messages } = await import(
  new URL(`messages-${lang.toLowerCase()}.js`, import.meta.url).href
);
const plurals = new Map();
const numbers = new Map();

function pluralRule(type) {
  if (!plurals.has(type)) plurals.set(type, new Intl.PluralRules(lang, { type }));
  return plurals.get(type);
}

function numberFormat(style) {
  const key = style ?? '';
  if (!numbers.has(key)) numbers.set(key, new Intl.NumberFormat(lang, style === 'percent' ? { style } : {}));
  return numbers.get(key);
}

// intl-messageformat's element types: 0 literal, 1 argument, 2 number, 3 date, 4 time, 5 select,
// 6 plural, 7 `#`, 8 tag (shown as its content: the pages build their markup themselves).
function render(elements, values, count) {
  let out = '';
  for (const el of elements) {
    const value = values[el.value];
    switch (el.type) {
      case 0:
        out += el.value;
        break;
      case 1:
        out += value ?? '';
        break;
      case 2:
        out += numberFormat(typeof el.style === 'string' ? el.style : undefined).format(value);
        break;
      case 3:
      case 4:
        out += new Date(value).toLocaleString(
          lang,
          el.type === 3 ? { dateStyle: 'medium' } : { timeStyle: 'short' },
        );
        break;
      case 5:
        out += render((el.options[value] ?? el.options.other).value, values, count);
        break;
      case 6: {
        const n = Number(value) - (el.offset ?? 0);
        const exact = el.options[`=${Number(value)}`];
        const option =
          exact ?? el.options[pluralRule(el.pluralType ?? 'cardinal').select(n)] ?? el.options.other;
        out += render(option.value, values, n);
        break;
      }
      case 7:
        out += numberFormat().format(count);
        break;
      case 8:
        out += render(el.children, values, count);
        break;
    }
  }
  return out;
}

/** Whether the page scripts have this message. */
export function has(key) {
  return Object.hasOwn(messages, key);
}

/** One message of the page scripts (`js.*`) in the page's language; the key itself if unknown. */
export function t(key, values = {}) {
  const ast = messages[key];
  return ast === undefined ? key : render(ast, values, 0);
}

/** The one date format of every page and the console: "26 Nov 2026, 10:15" in the page's language. */
export function formatDate(iso) {
  if (!iso) return t('js.common.never');
  return new Date(iso).toLocaleString(lang, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * Wires the picker (a GET form to the language route, which sets the cookie and returns here):
 * choosing submits it at once, after saving the choice as the signed-in user's `locale`
 * (`saveLocale`, given by lib.js). Without this script, its button submits it.
 */
export function wirePicker(saveLocale) {
  const select = document.getElementById('gh-lang');
  const apply = document.getElementById('gh-lang-apply');
  if (!select || !apply) return;
  apply.hidden = true;
  select.addEventListener('change', async () => {
    select.disabled = true;
    try {
      await saveLocale(select.value);
    } catch {
      // The cookie holds the choice; the account's language can be chosen again later.
    }
    select.disabled = false;
    select.form.submit();
  });
}
