// The signing core is pure: it raises its own SigningError (no HTTP status, no catalogue) and imports only its own
// files, the limits and its crypto libraries; the services map its errors to the catalogue
// (src/errors/pure-error-mapping.ts), and every surface answers them exactly as before.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { failureStatusOf, refusalStatusOf } from '../../src/engine/observer.ts';
import { errorCatalogue } from '../../src/errors/catalogue.ts';
import { ServiceError } from '../../src/errors/service-error.ts';
import { asServiceError, serviceErrorOfSigning } from '../../src/errors/pure-error-mapping.ts';
import { SigningError, signingErrorCodes } from '../../src/signing/errors.ts';
import { base64ToBytes, parseRecognitionProofHeader, parseRfc3339, verifyArtifact } from '../../src/signing/index.ts';
import { projectRoot } from '../helpers/server-process.ts';

const signingDir = path.join(projectRoot, 'src/signing');
const sources = fs.readdirSync(signingDir).filter((file) => file.endsWith('.ts')).map((file) => ({ file, text: fs.readFileSync(path.join(signingDir, file), 'utf8') }));

/** Every module a file names: static imports and re-exports, dynamic imports, requires. */
function importTargets(text: string): string[] {
  const pattern = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]([^'"]+)['"]/g;
  return [...text.matchAll(pattern)].map((match) => match[1]!);
}

/** What signing/ may import: its own files, the limits, Node's crypto and the two @noble packages. */
const allowed = (target: string): boolean =>
  /^\.\/[\w-]+\.ts$/.test(target) || target === '../limits.ts' || target === 'node:crypto' || /^@noble\/(ed25519|hashes\/[\w./-]+)$/.test(target);

/** The error `action` throws (the test fails when it returns). */
function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw, but the action returned');
}

describe('src/signing/ is pure', () => {
  it('finds the imports it looks for (so the checks below cannot pass by finding nothing)', () => {
    const all = sources.flatMap(({ text }) => importTargets(text));
    expect(sources.length).toBeGreaterThan(10);
    expect(all).toContain('./errors.ts');
    expect(all).toContain('../limits.ts');
    expect(all).toContain('node:crypto');
  });

  it('imports nothing of errors/ (the catalogue, ServiceError), Fastify, pg or any layer above it', () => {
    const offenders = sources.flatMap(({ file, text }) => importTargets(text).filter((target) => !allowed(target)).map((target) => `${file} → ${target}`));
    expect(offenders).toEqual([]);
    // The allow-list itself refuses what the brief of this module forbids.
    for (const forbidden of ['../errors/service-error.ts', '../errors/catalogue.ts', 'fastify', 'pg', '../errors/pure-error-mapping.ts']) {
      expect(allowed(forbidden), forbidden).toBe(false);
    }
  });

  it('throws SigningError, without a status, for values, versions, artifacts and proofs', () => {
    for (const action of [
      () => base64ToBytes('AB==', 'principal_pubkey', 32),
      () => parseRfc3339('tomorrow', 'deadline'),
      () => verifyArtifact({ schema_version: 99 }),
      () => parseRecognitionProofHeader('!!!'),
    ]) {
      const thrown = thrownBy(action);
      expect(thrown).toBeInstanceOf(SigningError);
      expect(thrown).not.toBeInstanceOf(ServiceError);
      expect(thrown).not.toHaveProperty('statusCode');
    }
  });

  it('raises only catalogue codes: signing and artifact codes are 400, recognition codes 401', () => {
    for (const code of signingErrorCodes) {
      expect(errorCatalogue[code].status, code).toBe(code.startsWith('recognition.') ? 401 : 400);
    }
  });

  it('says what is wrong in its own message: the code, the field and the reason', () => {
    expect((thrownBy(() => parseRfc3339('tomorrow', 'deadline')) as Error).message).toBe(
      'signing.value_invalid: deadline must be an RFC 3339 timestamp (YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM))',
    );
    expect(new SigningError('recognition.expired').message).toBe('recognition.expired');
  });
});

describe('mapped to the catalogue', () => {
  it('answers what the API has always answered: same code, status, catalogue message and details', () => {
    const mapped = asServiceError(thrownBy(() => base64ToBytes('AB==', 'principal_pubkey', 32)));
    expect(mapped).toBeInstanceOf(ServiceError);
    expect(mapped).toMatchObject({
      code: 'signing.value_invalid',
      statusCode: 400,
      message: errorCatalogue['signing.value_invalid'].message,
      details: { field: 'principal_pubkey', reason: 'has non-zero padding bits' },
    });
    const proof = asServiceError(thrownBy(() => parseRecognitionProofHeader(undefined))) as ServiceError;
    expect({ code: proof.code, statusCode: proof.statusCode, message: proof.message, details: proof.details }).toEqual({
      code: 'recognition.required', statusCode: 401, message: errorCatalogue['recognition.required'].message, details: undefined,
    });
    expect(serviceErrorOfSigning(new SigningError('artifact.kind_unknown', { field: 'kind' })).cause).toBeInstanceOf(SigningError);
    const other = new Error('not a pure error');
    expect(asServiceError(other)).toBe(other);
  });

  it('counts with the catalogue status in the engine, which sits below the mapping', () => {
    expect(failureStatusOf(new SigningError('signing.version_unsupported', { field: 'signing_version', value: 8 }))).toBe(400);
    expect(failureStatusOf(new SigningError('recognition.malformed', { reason: 'header is not base64url' }))).toBe(401);
    expect(refusalStatusOf(new ServiceError('intent.not_found'))).toBe(404);
    expect(refusalStatusOf(new Error('a bug'))).toBeUndefined();
    expect(failureStatusOf(new Error('a bug'))).toBe(500);
  });
});
