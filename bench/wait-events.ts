// Samples what the service's Postgres backends are doing (pg_stat_activity) while load runs: on CPU, waiting on a
// lock, on the WAL flush, or idle in a transaction waiting for the Node process to send the next statement.
import pg from 'pg';

export interface WaitSampler {
  /** Stops sampling; answers each state's share of backend-samples, largest first, in percent. */
  stop(): Promise<Array<{ state: string; percent: number }>>;
}

export async function sampleWaitEvents(adminUrl: string, database: string, intervalMs = 50): Promise<WaitSampler> {
  const client = new pg.Client({ connectionString: adminUrl });
  // Unheard, a dropped connection's 'error' event would crash the bench before it drops its databases.
  client.on('error', () => {});
  await client.connect();
  const counts = new Map<string, number>();
  let total = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const { rows } = await client.query<{ state: string | null; wait_event_type: string | null; wait_event: string | null }>(
        `SELECT state, wait_event_type, wait_event FROM pg_stat_activity
         WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
        [database],
      );
      for (const row of rows) {
        const wait = row.wait_event_type ? `${row.wait_event_type}:${row.wait_event}` : 'on CPU';
        const key = row.state === 'active' ? `active, ${wait}` : `${row.state ?? 'unknown'}${row.state === 'idle in transaction' ? ' (waiting for the service)' : ''}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
        total += 1;
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await client.end();
      return [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([state, count]) => ({ state, percent: (count / total) * 100 }));
    },
  };
}
