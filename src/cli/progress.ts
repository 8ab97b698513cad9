// Progress of long CLI jobs on a terminal: one line on stderr, rewritten in place. Silent when stderr is not a
// terminal (a pipe, a file, CI) and with --json, so what scripts read never carries it.

/** How often the line is redrawn at most: fast enough to look alive, slow enough not to cost the job anything. */
const redrawIntervalMs = 100;
/** How often `during` redraws the elapsed time while no other update arrives. */
const elapsedTickMs = 1000;
/** Erase the current terminal line and return to its start (ANSI "erase in line", whole line). */
const clearLine = '\r\x1b[2K';

export interface Progress {
  /** Shows `text` as the job's state (redrawn at most every redrawIntervalMs; a skipped text is drawn afterwards). */
  update(text: string): void;
  /** Shows `label` until `work` settles, with the seconds elapsed (and any `update` made meanwhile); then clears. */
  during<T>(label: string, work: Promise<T>): Promise<T>;
  /** Clears the line, so the result printed next starts on a clean line. */
  finish(): void;
}

export interface ProgressOptions {
  readonly json: boolean;
  readonly stream?: NodeJS.WriteStream;
}

export function createProgress({ json, stream = process.stderr }: ProgressOptions): Progress {
  if (json || !stream.isTTY) return silentProgress;
  let latest = '';
  let shown = false;
  let lastDrawMs = Number.NEGATIVE_INFINITY;
  let startedMs: number | undefined;
  // A skipped update is drawn when the interval is over, so a long step never hides behind a short one's text.
  let trailing: NodeJS.Timeout | undefined;

  const draw = () => {
    lastDrawMs = Date.now();
    const elapsed = startedMs === undefined ? '' : ` (${Math.floor((lastDrawMs - startedMs) / 1000)} s)`;
    const text = `${latest}…${elapsed}`;
    // A line wider than the terminal would wrap, and \r would then redraw only its last part. A terminal that
    // reports no size (0 columns, as a bare pseudo-terminal does) is taken to be 80 wide.
    const width = Math.max(20, (stream.columns || 80) - 1);
    stream.write(`${clearLine}${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
    shown = true;
  };

  const progress: Progress = {
    update(text) {
      latest = text;
      const waitMs = lastDrawMs + redrawIntervalMs - Date.now();
      if (waitMs <= 0) return draw();
      trailing ??= setTimeout(() => {
        trailing = undefined;
        draw();
      }, waitMs).unref();
    },
    async during(label, work) {
      startedMs = Date.now();
      latest = label;
      draw();
      const ticker = setInterval(draw, elapsedTickMs).unref();
      try {
        return await work;
      } finally {
        clearInterval(ticker);
        startedMs = undefined;
        progress.finish();
      }
    },
    finish() {
      clearTimeout(trailing);
      trailing = undefined;
      if (shown) stream.write(clearLine);
      shown = false;
      lastDrawMs = Number.NEGATIVE_INFINITY;
    },
  };
  return progress;
}

const silentProgress: Progress = {
  update() {},
  during: (_label, work) => work,
  finish() {},
};
