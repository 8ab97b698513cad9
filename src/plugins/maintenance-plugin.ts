// Runs maintenance every few seconds in every replica, and once soon after start (a funding claim orphaned by a
// crash is resolved within seconds of the restart); the advisory lock inside lets one replica at a time do the work.
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { maintenanceFirstPassDelayMs, maintenanceIntervalMs } from '../limits.ts';
import { runMaintenance } from '../services/maintenance.ts';

export const maintenance = fastifyPlugin(
  async (app: FastifyInstance, options: { enabled: boolean }) => {
    if (!options.enabled) return;
    let running: Promise<unknown> | undefined;
    const runPass = (): void => {
      if (running) return; // A slow pass is not overlapped by the next one.
      running = runMaintenance(app.database, app.engineEffects, new Date(), app.railRuntime)
        .then((report) => {
          if (report.refunded > 0) app.log.info({ refunded: report.refunded }, 'refunded intents past their deadline');
        })
        .catch((error: unknown) => app.log.error({ err: error }, 'maintenance pass failed'))
        .finally(() => {
          running = undefined;
        });
    };
    const first = setTimeout(runPass, maintenanceFirstPassDelayMs);
    const timer = setInterval(runPass, maintenanceIntervalMs);
    first.unref();
    timer.unref();
    app.addHook('onClose', async () => {
      clearTimeout(first);
      clearInterval(timer);
      await running;
    });
  },
  { name: 'maintenance', dependencies: ['database', 'engine-effects'] },
);
