// The languages of the hosted pages, the console and the mails (docs/languages.md, API §24).
export { BUILT_IN, messageArguments, messageProblem } from './catalogs.ts';
export { type Languages, loadLanguages, type MessageKey } from './languages.ts';
export {
  canonicalTag,
  type LanguageHints,
  lookup,
  lookupOne,
  negotiate,
  parseAcceptLanguage,
  parseUiLocales,
  textDirection,
} from './negotiate.ts';
