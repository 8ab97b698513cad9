// HTML for the console, built as text on the server: a tagged template that escapes every interpolated value
// unless it is already markup, so no page can carry a string from the API or the URL as markup by mistake.

/** Markup that is already safe to emit as is. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => escapes[character]!);
}

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

/** `html\`<p>${name}</p>\`` escapes `name`; nested `html` results and arrays of them pass through. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let text = strings[0]!;
  for (let index = 0; index < values.length; index++) text += render(values[index]!) + strings[index + 1]!;
  return new Html(text);
}

/** Cents as an amount with two decimals and the currency code, e.g. `12.50 USD`. */
export function money(cents: number, currency = 'usd'): string {
  const sign = cents < 0 ? '-' : '';
  const absolute = Math.abs(cents);
  return `${sign}${Math.floor(absolute / 100)}.${String(absolute % 100).padStart(2, '0')} ${currency.toUpperCase()}`;
}

/** An RFC 3339 time shown as `2026-11-25 03:46:48 UTC`; empty text for none. */
export function when(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '';
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
