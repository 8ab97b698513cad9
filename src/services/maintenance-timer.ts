// Runs maintenance every few seconds in every replica, and once soon after start (a funding claim orphaned by a
// crash is resolved within seconds of the restart); the advisory lock inside lets one replica at a time do the work.
import type { EngineEffects } from '../engine/effects.ts';
import { PeriodicPass, type BackgroundService } from '../infra/background.ts';
import type { Database } from '../infra/database.ts';
import { maintenanceFirstPassDelayMs, maintenanceIntervalMs } from '../limits.ts';
import type { RailRuntime } from '../rails/index.ts';
import { runMaintenance } from './maintenance.ts';

export interface MaintenanceTimerContext {
  readonly database: Database;
  readonly engineEffects: EngineEffects;
  readonly railRuntime: RailRuntime;
  readonly log: { info(object: object, message: string): void; error(object: object, message: string): void };
}

/** The timer the app starts (src/app.ts); tests run passes by hand instead. */
export function maintenanceTimer(context: MaintenanceTimerContext): BackgroundService {
  return new PeriodicPass({
    intervalMs: maintenanceIntervalMs,
    firstPassDelayMs: maintenanceFirstPassDelayMs,
    pass: async () => {
      const report = await runMaintenance(context.database, context.engineEffects, new Date(), context.railRuntime);
      if (report.refunded > 0) context.log.info({ refunded: report.refunded }, 'refunded intents past their deadline');
    },
    onError: (error) => context.log.error({ err: error }, 'maintenance pass failed'),
  });
}
