// The release-rule module is pure: it raises its own PredicateError (no HTTP status, no catalogue) and imports
// nothing of the service's error envelope, Fastify or pg; the services map its errors to the catalogue
// (src/errors/pure-error-mapping.ts), and the API answers them exactly as before.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorCatalogue } from '../../src/errors/catalogue.ts';
import { ServiceError } from '../../src/errors/service-error.ts';
import { compilePredicate, materializeTemplate } from '../../src/predicate/index.ts';
import { PredicateError, predicateErrorCodes } from '../../src/predicate/errors.ts';
import { asServiceError } from '../../src/errors/pure-error-mapping.ts';
import { projectRoot } from '../helpers/server-process.ts';

const predicateDir = path.join(projectRoot, 'src/predicate');
const sources = fs.readdirSync(predicateDir).filter((file) => file.endsWith('.ts')).map((file) => ({ file, text: fs.readFileSync(path.join(predicateDir, file), 'utf8') }));

describe('src/predicate/ is pure', () => {
  it('imports nothing of errors/, Fastify or pg', () => {
    const offenders = sources.flatMap(({ file, text }) =>
      [...text.matchAll(/from '([^']+)'/g)].map((match) => match[1]!).filter((target) => /errors\/|^fastify|^pg$/.test(target)).map((target) => `${file} → ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  it('throws PredicateError, whose every code is a 400 of the catalogue', () => {
    for (const code of predicateErrorCodes) expect(errorCatalogue[code].status).toBe(400);
    expect(() => compilePredicate({ version: 2, root: { op: 'true' } })).toThrow(PredicateError);
    expect(() => materializeTemplate('no_such_template')).toThrow(PredicateError);
    let thrown: unknown;
    try {
      compilePredicate({ version: 1, root: { op: 'true', extra: 1 } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PredicateError);
    expect(thrown).not.toHaveProperty('statusCode');
  });

  it('maps to the ServiceError the API has always answered: same code, status, message and details', () => {
    let thrown: unknown;
    try {
      compilePredicate({ version: 1, root: { op: 'true', extra: 1 } });
    } catch (error) {
      thrown = error;
    }
    const mapped = asServiceError(thrown);
    expect(mapped).toBeInstanceOf(ServiceError);
    expect(mapped).toMatchObject({
      code: 'predicate.invalid',
      statusCode: 400,
      message: `${errorCatalogue['predicate.invalid'].message} (unknown field at "/root/extra")`,
      details: { pointer: '/root/extra', reason: 'unknown field' },
    });
    const other = new Error('not a pure error');
    expect(asServiceError(other)).toBe(other);
  });
});
