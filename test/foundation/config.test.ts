// Configuration is read strictly: a wrong value stops the start with a message naming the variable.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('loadConfig', () => {
  it('defaults to the embedded database, loopback and port 8080', () => {
    expect(loadConfig({})).toEqual({ databaseUrl: undefined, dataDir: path.resolve('data'), host: '127.0.0.1', port: 8080, logLevel: 'info', signingKeysJson: undefined, signingKeyFile: undefined });
  });

  it('treats an empty DATABASE_URL as unset', () => {
    expect(loadConfig({ DATABASE_URL: '  ' }).databaseUrl).toBeUndefined();
  });

  it('reads every variable', () => {
    expect(loadConfig({
      DATABASE_URL: 'postgresql://u@h/db', SVC_DATA_DIR: '/tmp/x', HOST: '0.0.0.0', PORT: '9000', LOG_LEVEL: 'DEBUG',
      SVC_SIGNING_KEYS: '{"keys":[]}', SVC_SIGNING_KEY_FILE: '/etc/svc/keys.json',
    })).toEqual({
      databaseUrl: 'postgresql://u@h/db', dataDir: '/tmp/x', host: '0.0.0.0', port: 9000, logLevel: 'debug',
      signingKeysJson: '{"keys":[]}', signingKeyFile: '/etc/svc/keys.json',
    });
  });

  it.each([
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ PORT: '80a' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ PORT: '-1' }, /PORT/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
  ])('rejects %o', (environment, message) => {
    expect(() => loadConfig(environment)).toThrow(message);
  });
});
