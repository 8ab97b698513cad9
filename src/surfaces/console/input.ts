// What a console route takes from a request, checked once for every console route before its page runs: a form
// body (urlencoded, or a JSON object of the same shape: text, or lists of text for repeated fields) and a query of
// single text values. Anything else (a number, a nested object, a repeated query parameter) is refused with 400
// `request.invalid` on the console's error page, instead of reaching page code that reads every value as text.
import type { FastifyRequest } from 'fastify';
import { ServiceError } from '../../errors/service-error.ts';
import { boundedPointer } from '../../infra/validation.ts';

export type FormBody = Record<string, string | string[]>;

/** A form body: `name=value` pairs, a repeated name (checkboxes) becoming a list. */
export function parseForm(text: string): FormBody {
  const body: FormBody = Object.create(null);
  for (const [name, value] of new URLSearchParams(text)) {
    const existing = body[name];
    body[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return body;
}

/** A field name as the refusal quotes it: a hostile name may be megabytes long. */
const quotedName = (name: string) => JSON.stringify(name.length > fieldNameQuotedLengthMax ? `${name.slice(0, fieldNameQuotedLengthMax)}…` : name);
const fieldNameQuotedLengthMax = 64;

function refusal(location: 'body' | 'querystring', name: string | undefined, message: string): ServiceError {
  const path = name === undefined ? '/' : boundedPointer(`/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`);
  return new ServiceError('request.invalid', { message, details: { fields: [{ location, path, message }] } });
}

/** Refuses a body that is not a form; an absent body (a form with no fields, a post with only the CSRF header) is
 * one. */
function assertFormBody(body: unknown): void {
  if (body === undefined || body === null) return;
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw refusal('body', undefined, 'A console form is a set of named text fields; send it as a form, or as a JSON object of strings.');
  }
  for (const [name, value] of Object.entries(body)) {
    const text = typeof value === 'string' || (Array.isArray(value) && value.every((item) => typeof item === 'string'));
    if (!text) throw refusal('body', name, `The form field ${quotedName(name)} must be text (or a list of texts for a repeated field).`);
  }
}

/** Refuses a query parameter given more than once (the parser makes it a list): console pages take one of each. */
function assertFlatQuery(query: unknown): void {
  if (query === null || typeof query !== 'object') return;
  for (const [name, value] of Object.entries(query)) {
    if (typeof value !== 'string') throw refusal('querystring', name, `The query parameter ${quotedName(name)} must be given once.`);
  }
}

/** The console's preValidation hook: bodies and queries of every console route, checked as above. */
export async function assertConsoleInput(request: FastifyRequest): Promise<void> {
  assertFlatQuery(request.query);
  assertFormBody(request.body);
}
