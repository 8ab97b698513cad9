// A Postgres LISTEN subscription that stays subscribed: its connection is reopened whenever it is lost (a backend
// terminated, a restart, a failover), and checked now and then so that one lost without a word is noticed too.
// Notifications sent while it was away are gone; the owner hears of each resubscription and catches up itself.
import pg from 'pg';
import { revocationListenerCheckIntervalMs, revocationListenerReconnectDelayMaxMs } from '../limits.ts';

export interface NotificationListenerLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface NotificationListenerOptions {
  readonly connection: pg.ClientConfig;
  /** A plain identifier (it is written into `LISTEN` as it is). */
  readonly channel: string;
  /** What Postgres shows as `application_name` for this connection. */
  readonly applicationName: string;
  /** Says what the subscription is for in log lines. */
  readonly purpose: string;
  readonly logger: NotificationListenerLogger;
  onNotification(payload: string): void;
  /** Called once subscribed again after the subscription was lost, or first subscribed after a failed start: the
   * notifications of the time between are lost. */
  onResubscribed(): void;
  readonly checkIntervalMs?: number;
  readonly reconnectDelayMaxMs?: number;
}

/** The first reopening is tried at once; later ones wait this long, doubling, up to reconnectDelayMaxMs. */
const reconnectDelayFirstMs = 100;

export class NotificationListener {
  readonly #options: NotificationListenerOptions;
  readonly #checkIntervalMs: number;
  readonly #reconnectDelayMaxMs: number;
  #client: pg.Client | undefined;
  /** Attempts to subscribe since the subscription was last held (0 while it is held). */
  #failedAttempts = 0;
  /** Whether notifications may have been missed: the subscription was lost, or never held. */
  #missedNotifications = false;
  #stopped = false;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #checkTimer: NodeJS.Timeout | undefined;
  #checking = false;

  constructor(options: NotificationListenerOptions) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.channel)) throw new Error(`notification channel ${JSON.stringify(options.channel)} is not a plain identifier`);
    this.#options = options;
    this.#checkIntervalMs = options.checkIntervalMs ?? revocationListenerCheckIntervalMs;
    this.#reconnectDelayMaxMs = options.reconnectDelayMaxMs ?? revocationListenerReconnectDelayMaxMs;
  }

  /** Whether the subscription is held right now. */
  get subscribed(): boolean {
    return this.#client !== undefined;
  }

  /** Subscribes; answers whether it worked the first time. Either way it keeps trying until `stop`. */
  async start(): Promise<boolean> {
    const subscribed = await this.#subscribe();
    if (!subscribed) this.#options.logger.warn({}, `${this.#options.purpose}: cannot subscribe yet; retrying in the background`);
    this.#checkTimer = setInterval(() => void this.#check(), this.#checkIntervalMs);
    this.#checkTimer.unref();
    return subscribed;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#reconnectTimer);
    clearInterval(this.#checkTimer);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  async #subscribe(): Promise<boolean> {
    const client = new pg.Client({
      ...this.#options.connection,
      application_name: this.#options.applicationName,
      keepAlive: true,
      // A server that drops packets would otherwise hold the attempt, and every later one, forever.
      connectionTimeoutMillis: this.#checkIntervalMs,
    });
    // Without a listener an 'error' event would end the process; 'end' comes too when the server closed first.
    client.on('error', (error: Error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, new Error('the connection ended')));
    client.on('notification', (message) => {
      if (message.channel === this.#options.channel && message.payload) this.#options.onNotification(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#options.channel}`);
    } catch {
      void client.end().catch(() => {});
      this.#missedNotifications = true;
      this.#scheduleReconnect();
      return false;
    }
    if (this.#stopped) {
      await client.end().catch(() => {});
      return false;
    }
    this.#client = client;
    if (this.#missedNotifications) {
      this.#missedNotifications = false;
      this.#options.logger.info({ attempts: this.#failedAttempts + 1 }, `${this.#options.purpose}: subscribed again`);
      this.#options.onResubscribed();
    }
    this.#failedAttempts = 0;
    return true;
  }

  /** The subscription's connection failed: drop it and subscribe again. Called once per connection (error and end
   * both arrive for one loss). */
  #lost(client: pg.Client, error: Error): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#missedNotifications = true;
    void client.end().catch(() => {});
    if (this.#stopped) return;
    const reason = { message: error.message, code: (error as { code?: unknown }).code };
    this.#options.logger.warn({ err: reason }, `${this.#options.purpose}: connection lost; subscribing again`);
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#stopped || this.#reconnectTimer !== undefined) return;
    const delayMs = this.#failedAttempts === 0 ? 0 : Math.min(reconnectDelayFirstMs * 2 ** (this.#failedAttempts - 1), this.#reconnectDelayMaxMs);
    this.#failedAttempts += 1;
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      if (!this.#stopped && this.#client === undefined) void this.#subscribe();
    }, delayMs);
    this.#reconnectTimer.unref();
  }

  /** A connection can be lost without a word (a failover that drops packets): a statement that does not come back
   * within the check interval says so. */
  async #check(): Promise<void> {
    const client = this.#client;
    if (client === undefined || this.#checking) return;
    this.#checking = true;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer to a check within ${this.#checkIntervalMs} ms`)), this.#checkIntervalMs);
    });
    try {
      await Promise.race([client.query('SELECT 1'), late]);
    } catch (error) {
      this.#lost(client, error instanceof Error ? error : new Error(String(error)));
    } finally {
      clearTimeout(timer);
      this.#checking = false;
    }
  }
}
