// Request generation for the console's routes, which no JSON schema describes: form fields by the names the pages
// read, sent urlencoded or as JSON (where a field can also be a number, an object or a nested list), with or without
// the CSRF token, and page queries with hostile and repeated values. The harness adds the session cookie.
import fc from 'fast-check';
import { unicodeCharacter } from './generate.ts';

/** Every field a console form or page reads (boundary.test.ts checks that the pages' sources name no other). */
export const consoleFieldNames = [
  'email', 'next', 'challenge_id', 'code', 'tenant_id',
  'name', 'role', 'key_kind', 'scopes',
  'kind', 'subject', 'public_key_ed25519_hex',
  'do', 'evidence', 'amount_cents', 'version_seq', 'expected_head_digest', 'target_digest', 'confirm',
  'parameter.status_path', 'parameter.expected_status', 'parameter.cost_path', 'parameter.http_status_path',
  'parameter.expected_http_status', 'parameter.event_type_path', 'parameter.expected_event_type',
  'parameter.operation_path', 'parameter.expected_operation',
  'rails', 'x402_address', 'mpp_profile_id', 'mpp_session_enabled', 'settlement_network_recipient', 'processor_destination',
  'operation', 'requested_spend_cents', 'completion_preset', 'status', 'cost_cents',
  'time_start', 'time_end', 'intent_id', 'disclosure_tier',
  'user_code', 'decision',
  'url', 'description', 'enabled_events', 'enabled',
  'resolution', 'released_cents', 'note', 'idempotency_key',
] as const;

/** Every query parameter a console page reads. */
export const consoleQueryNames = ['next', 'reason', 'state', 'operator_did', 'kind', 'user_code', 'cursor', 'target', 'code', 'iss'] as const;

/** How a console request carries its form and its CSRF token. */
export interface ConsoleInput {
  readonly fields: ReadonlyArray<readonly [string, unknown]>;
  /** urlencoded (every value as text), a JSON object (repeated names become lists), or a JSON value that is not an
   * object at all. */
  readonly body: 'urlencoded' | 'json' | 'json-value';
  readonly csrf: 'field' | 'header' | 'missing' | 'wrong';
  readonly query: ReadonlyArray<readonly [string, string]>;
}

/** Text a person could type, values the pages expect, and text from every troublesome Unicode class. */
const fieldText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40, unit: 'grapheme' }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'agent', 'admin', 'auditor', 'restricted', 'standard', 'mcp.spend:write', 'approve', 'deny', 'preview', 'test', 'draft',
      'true', '1', '100', '-1', '1e400', 'completed', 'x402_usdc_base', 'processor_mpp', `0x${'ab'.repeat(20)}`, 'profile_test_1',
      '{"status":"completed","cost_cents":90}', 'https://example.com/hooks', 'intent.released', '*', 'false', 'split', 'release', 'refund', '["status"]', 'BCDF-GHJK', '2026-01-01T00:00:00Z', 'someone@example.com', '/console/intents',
    ),
  },
  { weight: 2, arbitrary: fc.tuple(unicodeCharacter, fc.constantFrom(1, 64, 65, 128, 129, 256, 257, 5_000)).map(([character, length]) => character.repeat(length)) },
  { weight: 1, arbitrary: fc.constantFrom('\u0000', 'a\u0000b', '\ud800', `${'\u0130'.repeat(125)}@x.io`, '%00', '<script>', 'x'.repeat(70_000)) },
);

/** What a JSON body may hold where a form has text: everything else a page must not read as text. */
const fieldValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fieldText },
  { weight: 1, arbitrary: fc.array(fieldText, { maxLength: 3 }) },
  { weight: 2, arbitrary: fc.constantFrom<unknown>(5, -1, 1.5, true, false, null, {}, { nested: 'text' }, [1], [['a']], ['a', { b: 1 }], [null]) },
);

const fieldName: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...consoleFieldNames) },
  { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('csrf_token', '__proto__', 'k'.repeat(5_000), '\u0130'.repeat(64))) },
);

export const consoleInput: fc.Arbitrary<ConsoleInput> = fc.record({
  fields: fc.array(fc.tuple(fieldName, fieldValue), { maxLength: 8 }),
  body: fc.constantFrom('urlencoded', 'urlencoded', 'json', 'json', 'json-value'),
  csrf: fc.oneof({ weight: 8, arbitrary: fc.constantFrom('field', 'header') }, { weight: 1, arbitrary: fc.constantFrom('missing', 'wrong') }),
  query: fc.array(fc.tuple(fc.constantFrom(...consoleQueryNames), fieldText), { maxLength: 3 }),
});

/** The form as a JSON object: a repeated name becomes a list, as the urlencoded parser makes it. */
function formObject(fields: ConsoleInput['fields']): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of fields) {
    const existing = Object.hasOwn(body, name) ? body[name] : undefined;
    const merged = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
    Object.defineProperty(body, name, { value: merged, enumerable: true, writable: true, configurable: true });
  }
  return body;
}

const asText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value) ?? '');

/** The body on the wire and its media type; `csrfToken` goes in as a field when the input says so. */
export function consoleBody(input: ConsoleInput, csrfToken: string): { body: string; contentType: string } {
  const fields: Array<readonly [string, unknown]> = [...input.fields];
  if (input.csrf === 'field') fields.push(['csrf_token', csrfToken]);
  if (input.csrf === 'wrong') fields.push(['csrf_token', 'x'.repeat(43)]);
  if (input.body === 'urlencoded') {
    const form = new URLSearchParams();
    for (const [name, value] of fields) for (const item of Array.isArray(value) ? value : [value]) form.append(name, asText(item));
    return { body: form.toString(), contentType: 'application/x-www-form-urlencoded' };
  }
  if (input.body === 'json') return { body: JSON.stringify(formObject(fields)), contentType: 'application/json' };
  return { body: JSON.stringify(fields.length === 0 ? [] : fields[0]![1] ?? null), contentType: 'application/json' };
}

/** The page query: each pair encoded, repeated names kept (a page must refuse them, not read a list as text). */
export function consoleQuery(input: ConsoleInput): string {
  // encodeURIComponent throws on a lone surrogate; the encoded form of one is covered by the other routes' queries.
  const wellFormed = (text: string) => text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
  return input.query.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(wellFormed(value))}`).join('&');
}

/** Every field of every form at once, as text of each troublesome class (urlencoded) and as each kind of JSON value
 * that is not text: one console form probe each. */
export function consoleProbes(): ConsoleInput[] {
  const everyField = (value: unknown): ConsoleInput['fields'] => consoleFieldNames.map((name) => [name, value] as const);
  const texts = ['\u0130'.repeat(256), '\u0085'.repeat(64), '\u{1f600}'.repeat(129), `${'\u0130'.repeat(125)}@x.io`, '\u202e<b>'];
  const values: unknown[] = [5, true, null, { nested: 'text' }, [['a']], ['a', 1]];
  return [
    ...texts.map((text) => ({ fields: everyField(text), body: 'urlencoded', csrf: 'field', query: [] }) as const),
    ...texts.map((text) => ({ fields: everyField(text), body: 'json', csrf: 'field', query: [] }) as const),
    ...values.map((value) => ({ fields: everyField(value), body: 'json', csrf: 'field', query: [] }) as const),
  ];
}
