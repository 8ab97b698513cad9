// Shared pieces of `npm run bench`: child-process servers, an autocannon run, and robust statistics.
import autocannon from 'autocannon';
import { startServiceProcess } from './service-process.ts';

export interface RunningServer {
  readonly baseUrl: string;
  stop(): Promise<void>;
}

/** Starts `node --import tsx <script>` on a free port and waits until it answers HTTP (service-process.ts). */
export async function startServer(script: string, env: Record<string, string>, readyPath = '/healthz'): Promise<RunningServer> {
  return startServiceProcess(env, [], script, readyPath);
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
