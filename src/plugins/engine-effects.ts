// Composes the engine's terminal effects once (src/engine/effects.ts) and shares them with every caller that can
// settle an intent: the confirm route, the sandbox evidence route and the maintenance sweeper.
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { engineEffects, type EngineEffects, type TerminalEffect } from '../engine/effects.ts';

declare module 'fastify' {
  interface FastifyInstance {
    engineEffects: EngineEffects;
  }
}

/** In order: each runs in the settling transaction, after the ledger posting is queued. */
const terminalEffects: readonly TerminalEffect[] = [];

export const engineEffectsPlugin = fastifyPlugin(
  async (app: FastifyInstance) => {
    app.decorate('engineEffects', engineEffects(app.gatewayKeys, terminalEffects));
  },
  { name: 'engine-effects', dependencies: ['database'] },
);
