/** The longest part of a value an error message quotes; longer values end in "…". */
export const QUOTE_MAX = 80;

/**
 * A value as an error message quotes it: exactly as given (case and all), cut after QUOTE_MAX
 * characters with "…" to say so, and control characters escaped so the message stays one line.
 */
export function quoted(value: string, max = QUOTE_MAX): string {
  const chars = Array.from(value);
  const shown = (chars.length > max ? chars.slice(0, max) : chars).map((c) => {
    const code = c.codePointAt(0) ?? 0;
    return code < 0x20 || code === 0x7f ? `\\u${code.toString(16).padStart(4, '0')}` : c;
  });
  return `"${shown.join('')}${chars.length > max ? '…' : ''}"`;
}
