// What the app runs beside its requests (the maintenance and tree-head timers, deliverers): a service it starts as it
// composes it and stops, waiting for the work in flight, when it closes. src/app.ts holds the list.
export interface BackgroundService {
  start(): void;
  /** Resolves once nothing the service started is still running; never rejects. */
  stop(): Promise<void>;
}

export interface PeriodicPassOptions {
  readonly intervalMs: number;
  /** A first pass this soon after start, before the first interval has passed; none when absent. */
  readonly firstPassDelayMs?: number;
  /** One pass of the work. A rejection goes to `onError`, and the next tick runs again. */
  readonly pass: () => Promise<void>;
  readonly onError: (error: unknown) => void;
}

/** Runs a pass every `intervalMs`, never two at once: a tick that finds the previous pass still running is skipped,
 * so a slow pass is not overlapped. The timers do not hold the process open. */
export class PeriodicPass implements BackgroundService {
  readonly #options: PeriodicPassOptions;
  #timers: NodeJS.Timeout[] = [];
  #running: Promise<void> | undefined;

  constructor(options: PeriodicPassOptions) {
    this.#options = options;
  }

  start(): void {
    if (this.#timers.length > 0) return;
    const { intervalMs, firstPassDelayMs } = this.#options;
    this.#timers = [setInterval(() => this.#runPass(), intervalMs)];
    if (firstPassDelayMs !== undefined) this.#timers.push(setTimeout(() => this.#runPass(), firstPassDelayMs));
    for (const timer of this.#timers) timer.unref();
  }

  async stop(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers = [];
    await this.#running;
  }

  #runPass(): void {
    if (this.#running) return;
    this.#running = this.#options
      .pass()
      .catch(this.#options.onError)
      .finally(() => {
        this.#running = undefined;
      });
  }
}
