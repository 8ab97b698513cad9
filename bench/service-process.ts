// A server as a child process of the bench (the real service by default): started on a free port, ready once it
// answers HTTP, with its pid (for CPU accounting), what it printed, node flags (`npm start`'s, then e.g.
// `--cpu-prof`, or a preload such as statement-counter.ts, loaded after tsx) and signals. Stopped with SIGTERM, so a
// CPU profile gets written.
// Should it die while the bench still needs it, the bench aborts with its exit status and last output.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { projectRoot } from './paths.ts';
import { abortBench, hold, ProcessDied } from './guard.ts';

export interface ServiceProcess {
  readonly baseUrl: string;
  readonly pid: number;
  /** What the process printed so far (warnings, errors, and anything a preload writes). */
  output(): string;
  signal(name: NodeJS.Signals): void;
  stop(): Promise<void>;
}

/** A port nobody listens on right now (the OS picks it; we release it for the child to take). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The node flags `npm start` runs the service with (package.json), those before `--import tsx`: every server the
 * bench starts, the bare baselines included, runs on the same V8 settings as the product. */
export const startNodeFlags: readonly string[] = (() => {
  const start = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(' ');
  return start.slice(1, start.indexOf('--import'));
})();

/** The last lines a dead process printed, for the abort message. */
const tail = (text: string) => text.slice(-2000).trimEnd() || '(nothing)';

export async function startServiceProcess(
  env: Record<string, string>,
  nodeFlags: readonly string[] = [],
  script = 'src/server.ts',
  readyPath = '/healthz',
): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...startNodeFlags, '--import', 'tsx', ...nodeFlags, script], {
    cwd: projectRoot,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let stopping = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = hold(`${script} (pid ${child.pid})`, async () => {
    stopping = true;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  // BENCH_SERVICE_START_SECONDS: on a machine busy with other work, compiling the service's modules alone can take
  // longer than the default.
  const startSeconds = Number(process.env['BENCH_SERVICE_START_SECONDS'] ?? 60);
  const deadline = Date.now() + startSeconds * 1000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`${script} exited with ${child.exitCode ?? child.signalCode} while starting:\n${tail(output)}`);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${script} did not answer ${readyPath} within ${startSeconds} s:\n${tail(output)}`);
    }
    if (await fetch(`${baseUrl}${readyPath}`).then(() => true, () => false)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.once('exit', (code, signal) => {
    // Stopped by us: SIGTERM, answered by a clean exit or by the signal itself. A process that died on its own may be
    // noticed only after the bench, failing against it, has begun to stop it: its exit status tells them apart.
    if (stopping && (code === 0 || signal === 'SIGTERM')) return;
    void abortBench(new ProcessDied(`${script} (pid ${child.pid}) died during the run (${code === null ? `signal ${signal}` : `exit code ${code}`}); it printed last:\n${tail(output)}`));
  });
  return { baseUrl, pid: child.pid!, output: () => output, signal: (name) => child.kill(name), stop };
}
