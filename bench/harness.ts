// Shared pieces of `npm run bench`: child-process servers, an autocannon run, and robust statistics.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

export const projectRoot = fileURLToPath(new URL('../', import.meta.url));

export interface RunningServer {
  readonly baseUrl: string;
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

/** Starts `node --import tsx <script>` on a free port and waits until it answers HTTP. */
export async function startServer(script: string, env: Record<string, string>, readyPath = '/healthz'): Promise<RunningServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: projectRoot,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) throw new Error(`${script} did not start:\n${output}`);
    const answered = await fetch(`${baseUrl}${readyPath}`).then(() => true, () => false);
    if (answered) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    baseUrl,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly errors: number;
}

/** One bounded autocannon run from this process (a second process to the server, on loopback). */
export async function load(url: string, options: { connections: number; seconds: number; headers?: Record<string, string> }): Promise<LoadResult> {
  const result = await autocannon({ url, connections: options.connections, duration: options.seconds, headers: options.headers ?? {} });
  return {
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** (max − min) / median, as a percentage: how noisy the rounds were. */
export function spreadPercent(values: readonly number[]): number {
  return ((Math.max(...values) - Math.min(...values)) / median(values)) * 100;
}

export const formatRate = (value: number, unit: string, values?: readonly number[]) =>
  `${Math.round(value).toLocaleString('en-US')} ${unit}${values ? ` (spread ${spreadPercent(values).toFixed(0)}%)` : ''}`;
