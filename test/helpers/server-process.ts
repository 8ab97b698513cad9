// Runs the real server (`node --import tsx src/server.ts`) as a child process, for tests of start-up, restart,
// concurrency across processes and shutdown.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { isThroughPooler, sessionUrlOf } from './database.ts';

export const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly baseUrl: string;
  readonly output: () => string;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  /** Sends a signal (unless the process has exited already) and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** A port nobody listens on right now (the OS picks it; we release it for the child to take). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts the server on a free port and waits until /healthz answers, whatever the log level. */
export async function startServerProcess(env: Record<string, string | undefined>, timeoutMs = 30_000): Promise<ServerProcess> {
  const port = await freePort();
  // Behind the tests' pooler (test/helpers/database.ts) the server needs its session route, as a deployment would.
  const sessionRoute = isThroughPooler(env.DATABASE_URL) && env.DATABASE_SESSION_URL === undefined ? { DATABASE_SESSION_URL: sessionUrlOf(env.DATABASE_URL!) } : {};
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: projectRoot,
    // Every answer the suite receives is checked against its route contract (docs/api.md "Response validation").
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', SVC_VALIDATE_RESPONSES: '1', ...env, ...sessionRoute, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode} before listening:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start in ${timeoutMs} ms:\n${output}`);
    }
    if (await fetch(`${baseUrl}/healthz`).then(() => true, () => false)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  return {
    child,
    baseUrl,
    output: () => output,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs the `svc` CLI to completion. */
export function runCli(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/svc.js', ...args], { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
