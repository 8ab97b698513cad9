// Composes the engine's terminal effects once (src/engine/effects.ts) and shares them with every caller that can
// settle an intent: the confirm route, the sandbox evidence route and the maintenance sweeper.
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { engineEffects, type EngineEffects, type TerminalEffect } from '../engine/effects.ts';
import { receiptsOnTerminal } from '../receipts/receipt-service.ts';
import { standingTerminalEffect } from '../services/standing-service.ts';

declare module 'fastify' {
  interface FastifyInstance {
    engineEffects: EngineEffects;
  }
}

/** In order: each runs in the settling transaction, after the ledger posting is queued. */
export const defaultTerminalEffects: readonly TerminalEffect[] = [standingTerminalEffect, receiptsOnTerminal];

/** `terminalEffects`: the service always runs the default list; a bench composes another to price one effect
 * (bench/receipts-bench.ts). */
export const engineEffectsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { terminalEffects?: readonly TerminalEffect[] | undefined }) => {
    app.decorate('engineEffects', engineEffects(app.gatewayKeys, options.terminalEffects ?? defaultTerminalEffects));
  },
  { name: 'engine-effects', dependencies: ['database'] },
);
