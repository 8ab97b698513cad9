// How sign-in codes reach people (docs/sign-in.md#mail-transport): by SMTP through nodemailer when SMTP_URL is set;
// otherwise, for local use, into the server log and the local outbox table that `svc auth outbox` reads. A code is a
// credential: with SMTP it is never written to the log.
import nodemailer from 'nodemailer';
import { smtpFromDefault } from '../config.ts';
import { insertOutboxCode } from '../db/mail-outbox-repository.ts';
import { mailSendTimeoutMs, signInChallengeLifetimeMs } from '../limits.ts';
import type { Queryable } from '../infra/database.ts';
import type { MailTransport, SignInCodeMessage } from './sign-in-service.ts';

export type { MailTransport, SignInCodeMessage };

export interface MailLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface MailOptions {
  /** `smtp://` or `smtps://` relay URL (config SMTP_URL); absent means the log and the outbox. */
  readonly smtpUrl?: string | undefined;
  readonly smtpFrom?: string | undefined;
}

export function signInMailText(message: SignInCodeMessage): { subject: string; text: string } {
  const minutes = Math.round(signInChallengeLifetimeMs / 60_000);
  return {
    subject: 'Your sign-in code',
    text: [
      `Your sign-in code is ${message.code}.`,
      '',
      `It expires in ${minutes} minutes and works once. If you did not ask to sign in, ignore this message.`,
      '',
    ].join('\n'),
  };
}

/** The local transport: the code goes to the outbox (with the challenge, in its transaction) and to the log. */
export class OutboxMailTransport implements MailTransport {
  readonly kind = 'outbox';

  constructor(private readonly logger: MailLogger) {}

  async stage(systemTx: Queryable, message: SignInCodeMessage): Promise<void> {
    await insertOutboxCode(systemTx, { email: message.email, challengeId: message.challengeId, code: message.code });
  }

  send(message: SignInCodeMessage): void {
    // Without a mail transport the code belongs in the log (docs/sign-in.md#mail-transport): this is the
    // local-development path. The field name is not one the logger redacts, on purpose; with SMTP_URL set this line
    // never exists.
    this.logger.info(
      { email: message.email, challenge_id: message.challengeId, sign_in_code: message.code, expires_at: message.expiresAt.toISOString() },
      'sign-in code (no SMTP_URL configured: not mailed; also readable once with `svc auth outbox --email`)',
    );
  }

  async close(): Promise<void> {}
}

/** Delivery by SMTP. A failed delivery is logged (without the code) and the person asks for a new code: login/start
 * answers the same whatever happens to the mail, so its answer cannot tell known from unknown emails. */
export class SmtpMailTransport implements MailTransport {
  readonly kind = 'smtp';
  readonly #transporter: nodemailer.Transporter;
  readonly #inFlight = new Set<Promise<void>>();

  constructor(
    smtpUrl: string,
    private readonly from: string,
    private readonly logger: MailLogger,
  ) {
    this.#transporter = nodemailer.createTransport({
      url: smtpUrl,
      connectionTimeout: mailSendTimeoutMs,
      greetingTimeout: mailSendTimeoutMs,
      socketTimeout: mailSendTimeoutMs,
      dnsTimeout: mailSendTimeoutMs,
      // nodemailer's own logger stays off: at debug level it would print the message, code included.
      logger: false,
      debug: false,
    });
  }

  async stage(): Promise<void> {}

  send(message: SignInCodeMessage): void {
    const { subject, text } = signInMailText(message);
    const delivery = this.#transporter
      .sendMail({ from: this.from, to: message.email, subject, text })
      .then(
        () => this.logger.info({ challenge_id: message.challengeId }, 'sign-in code mailed'),
        (error: unknown) =>
          // Only the error's name and SMTP response code: its message may quote the relay URL or the message.
          this.logger.warn(
            { challenge_id: message.challengeId, error_code: (error as { code?: unknown }).code ?? null, smtp_response_code: (error as { responseCode?: unknown }).responseCode ?? null },
            'sign-in code could not be mailed',
          ),
      )
      .finally(() => this.#inFlight.delete(delivery));
    this.#inFlight.add(delivery);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
    this.#transporter.close();
  }
}

/** The transport `options` ask for, announced in the log (the relay's host, never its URL, which may hold a
 * password). The app closes it last, so that deliveries in flight finish. */
export function createMailTransport(options: MailOptions, logger: MailLogger): MailTransport {
  if (options.smtpUrl) {
    logger.info({ mail_transport: 'smtp', smtp_host: new URL(options.smtpUrl).host }, 'sign-in codes are mailed by SMTP');
    return new SmtpMailTransport(options.smtpUrl, options.smtpFrom ?? smtpFromDefault, logger);
  }
  logger.info({ mail_transport: 'outbox' }, 'SMTP_URL is not set: sign-in codes go to the log and the local outbox');
  return new OutboxMailTransport(logger);
}
