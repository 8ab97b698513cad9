// The real service as a child process for the lifecycle bench: like harness.startServer, plus node flags (e.g.
// `--cpu-prof`) and the child's pid (for CPU accounting). Stopped with SIGTERM, so a CPU profile gets written.
import { spawn } from 'node:child_process';
import net from 'node:net';
import { projectRoot } from './harness.ts';

export interface ServiceProcess {
  readonly baseUrl: string;
  readonly pid: number;
  /** What the process printed so far (warnings, errors). */
  output(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startServiceProcess(env: Record<string, string>, nodeFlags: readonly string[] = []): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', 'src/server.ts'], {
    cwd: projectRoot,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`src/server.ts exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGTERM');
      throw new Error(`src/server.ts did not start:\n${output}`);
    }
    if (await fetch(`${baseUrl}/healthz`).then(() => true, () => false)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    baseUrl,
    pid: child.pid!,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
