/** The key list block of docs/languages.md for a catalog (scripts/locale-keys.mjs). */
export function keyList(messages: Readonly<Record<string, string>>): string;
