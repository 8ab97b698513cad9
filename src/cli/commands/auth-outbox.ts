// `svc auth outbox`: without a mail relay, prints (once) the newest sign-in code waiting for an address.
import { takeOutboxCode } from '../../services/sign-in-service.ts';
import { print, requiredOption, withDatabase, type CliCommand } from '../command.ts';

export const authOutbox: CliCommand = {
  name: 'auth outbox',
  summary: 'Without SMTP_URL: prints the latest undelivered sign-in code for an address, once.',
  synopsis: '--email E [--json]',
  details: [
    '--email E               the address the code was asked for',
    '--json                  print {email, challenge_id, code} as one JSON line',
    '',
    'Exit 1 when there is no such code, or when SMTP_URL is set (codes are then mailed, not kept).',
  ],
  options: { email: { type: 'string' } },
  async run({ options, json, config }) {
    const email = requiredOption(authOutbox, options, 'email');
    // The outbox is filled only when no SMTP transport is configured: with SMTP_URL set, refuse rather than print nothing useful.
    if (config.smtpUrl) throw new Error('SMTP_URL is set: sign-in codes are mailed, not kept in the local outbox');
    const message = await withDatabase(config, (database) => takeOutboxCode(database, email));
    if (!message) throw new Error(`no undelivered sign-in code for ${email} (ask for one with POST /v1/public/auth/login/start)`);
    print(
      json,
      { email: message.email, challenge_id: message.challengeId, code: message.code },
      `sign-in code for ${message.email}: ${message.code} (challenge ${message.challengeId})`,
    );
  },
};
