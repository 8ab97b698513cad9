// Configuration is read strictly: a wrong value stops the start with a message naming the variable.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('loadConfig', () => {
  it('defaults to the embedded database, loopback and port 8080', () => {
    expect(loadConfig({})).toEqual({ databaseUrl: undefined, databaseSessionUrl: undefined, dataDir: path.resolve('data'), host: '127.0.0.1', port: 8080, logLevel: 'info', signingKeysJson: undefined, signingKeyFile: undefined,
      smtpUrl: undefined, smtpFrom: 'svc <no-reply@localhost>',
      rateLimitPerMinute: 600, rateLimitPublicPerMinute: 120, redisUrl: undefined, validateResponses: false, webhookAllowPrivateDestinations: false,
      groupCommit: { enabled: true, windowMs: 2, groupSizeMax: 16 } });
  });

  it('treats an empty DATABASE_URL as unset', () => {
    expect(loadConfig({ DATABASE_URL: '  ' }).databaseUrl).toBeUndefined();
  });

  it('treats an empty DATABASE_SESSION_URL as unset, and never repeats it in its error', () => {
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@h/db', DATABASE_SESSION_URL: ' ' }).databaseSessionUrl).toBeUndefined();
    expect(() => loadConfig({ DATABASE_URL: 'postgresql://u@h/db', DATABASE_SESSION_URL: 'mysql://u:hunter2@h/db' })).toThrow(/^(?![\s\S]*hunter2)/);
  });

  it('reads every variable', () => {
    const secretsKey = Buffer.alloc(32, 7).toString('base64');
    const metricsToken = 'a'.repeat(40);
    expect(loadConfig({
      DATABASE_URL: 'postgresql://u@h/db', DATABASE_SESSION_URL: 'postgres://u@h:5433/db', SVC_DATA_DIR: '/tmp/x', HOST: '0.0.0.0', PORT: '9000', LOG_LEVEL: 'DEBUG',
      SVC_SIGNING_KEYS: '{"keys":[]}', SVC_SIGNING_KEY_FILE: '/etc/svc/keys.json',
      SMTP_URL: 'smtps://mailer:pw@smtp.example.com:465', SMTP_FROM: 'Acme <sign-in@example.com>',
      SVC_RATE_LIMIT_PER_MINUTE: '5', SVC_RATE_LIMIT_PUBLIC_PER_MINUTE: ' 1000000000 ', REDIS_URL: 'rediss://default:pw@redis.example.com:6380/2',
      SVC_SECRETS_KEY: secretsKey, SVC_METRICS_TOKEN: metricsToken, SVC_METRICS_PORT: '9464', SVC_METRICS_HOST: '0.0.0.0', SVC_VALIDATE_RESPONSES: '1',
      SVC_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true', SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS: '2500',
      SVC_GROUP_COMMIT: 'off', SVC_GROUP_COMMIT_WINDOW_MS: '5', SVC_GROUP_COMMIT_SIZE: '32',
    })).toEqual({
      databaseUrl: 'postgresql://u@h/db', databaseSessionUrl: 'postgres://u@h:5433/db', dataDir: '/tmp/x', host: '0.0.0.0', port: 9000, logLevel: 'debug',
      signingKeysJson: '{"keys":[]}', signingKeyFile: '/etc/svc/keys.json',
      smtpUrl: 'smtps://mailer:pw@smtp.example.com:465', smtpFrom: 'Acme <sign-in@example.com>',
      rateLimitPerMinute: 5, rateLimitPublicPerMinute: 1_000_000_000, redisUrl: 'rediss://default:pw@redis.example.com:6380/2',
      secretsKey, metricsToken, metricsPort: 9464, metricsHost: '0.0.0.0', validateResponses: true,
      webhookAllowPrivateDestinations: true, webhookAttemptTimeoutMs: 2500,
      groupCommit: { enabled: false, windowMs: 5, groupSizeMax: 32 },
    });
  });

  it.each([
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ DATABASE_URL: 'postgresql://u@h/db', DATABASE_SESSION_URL: 'h:5432' }, /^DATABASE_SESSION_URL must be/],
    [{ DATABASE_SESSION_URL: 'postgresql://u@h/db' }, /DATABASE_SESSION_URL needs DATABASE_URL/],
    [{ PORT: '80a' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ PORT: '-1' }, /PORT/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ SMTP_URL: 'http://smtp.example.com' }, /SMTP_URL/],
    [{ SMTP_URL: 'smtp host' }, /SMTP_URL/],
    [{ SMTP_FROM: 'nobody' }, /SMTP_FROM/],
    [{ SMTP_FROM: 'a@b.example\r\nBcc: c@d.example' }, /SMTP_FROM/],
    [{ SVC_RATE_LIMIT_PER_MINUTE: '0' }, /SVC_RATE_LIMIT_PER_MINUTE/],
    [{ SVC_RATE_LIMIT_PER_MINUTE: '1.5' }, /SVC_RATE_LIMIT_PER_MINUTE/],
    [{ SVC_RATE_LIMIT_PER_MINUTE: '1e3' }, /SVC_RATE_LIMIT_PER_MINUTE/],
    [{ SVC_RATE_LIMIT_PUBLIC_PER_MINUTE: '-1' }, /SVC_RATE_LIMIT_PUBLIC_PER_MINUTE/],
    [{ SVC_RATE_LIMIT_PUBLIC_PER_MINUTE: '1000000001' }, /SVC_RATE_LIMIT_PUBLIC_PER_MINUTE/],
    [{ REDIS_URL: 'http://127.0.0.1:6379' }, /REDIS_URL/],
    [{ REDIS_URL: '127.0.0.1:6379' }, /REDIS_URL/],
    [{ SVC_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'yes' }, /SVC_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS/],
    [{ SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS: '10' }, /SVC_WEBHOOK_ATTEMPT_TIMEOUT_MS/],
    [{ SVC_GROUP_COMMIT: 'yes' }, /SVC_GROUP_COMMIT must be "on" or "off"/],
    [{ SVC_GROUP_COMMIT_WINDOW_MS: '51' }, /SVC_GROUP_COMMIT_WINDOW_MS/],
    [{ SVC_GROUP_COMMIT_SIZE: '0' }, /SVC_GROUP_COMMIT_SIZE/],
  ])('rejects %o', (environment, message) => {
    expect(() => loadConfig(environment)).toThrow(message);
  });

  it('never repeats SMTP_URL, which may carry a password, in its error', () => {
    expect(() => loadConfig({ SMTP_URL: 'ftp://mailer:hunter2@smtp.example.com' })).toThrow(/^(?![\s\S]*hunter2)/);
  });

  it('treats an empty REDIS_URL as unset, and never repeats it in its error', () => {
    expect(loadConfig({ REDIS_URL: ' ' }).redisUrl).toBeUndefined();
    expect(() => loadConfig({ REDIS_URL: 'memcached://:hunter2@cache.example.com' })).toThrow(/^(?![\s\S]*hunter2)/);
  });
});
