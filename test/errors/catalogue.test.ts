// The error catalogue and docs/errors.md list the same codes with the same statuses and messages.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorCatalogue, retryAfterSecondsOf, type ErrorCode } from '../../src/errors/catalogue.ts';

const documentedRows = fs
  .readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')
  .split('\n')
  .map((line) => /^\| `([^`]+)` \| (\d{3}) \| (.+) \|$/.exec(line))
  .filter((match): match is RegExpExecArray => match !== null)
  .map(([, code, status, message]) => ({ code: code!, status: Number(status), message: message!.trim() }));

describe('error catalogue', () => {
  it('documents every code with its status and message, and documents nothing else', () => {
    const catalogued = Object.entries(errorCatalogue).map(([code, entry]) => ({ code, status: entry.status, message: entry.message }));
    expect(documentedRows).toEqual(catalogued);
  });

  it('uses stable dotted lowercase codes and real HTTP error statuses', () => {
    for (const [code, entry] of Object.entries(errorCatalogue)) {
      expect(code).toMatch(/^[a-z0-9_]+(\.[a-z0-9_]+)+$/);
      expect(entry.status).toBeGreaterThanOrEqual(400);
      expect(entry.status).toBeLessThan(600);
      expect(entry.message.length).toBeGreaterThan(0);
    }
  });

  it('gives every 503 code a Retry-After, and no other code one', () => {
    for (const [code, entry] of Object.entries(errorCatalogue)) {
      const retryAfterSeconds = retryAfterSecondsOf(code as ErrorCode);
      if (entry.status === 503) expect(retryAfterSeconds, code).toBeGreaterThanOrEqual(1);
      else expect(retryAfterSeconds, code).toBeUndefined();
    }
  });

  it('lists each code once in the documentation', () => {
    const codes = documentedRows.map((row) => row.code);
    expect(new Set(codes).size).toBe(codes.length);
  });
});
