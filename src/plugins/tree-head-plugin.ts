// Runs the tree-head pass every treeHeadIntervalMs in every replica; the advisory lock inside lets one of them sign
// at a time. One signed head per tenant with new leaves per pass: signing is batched, never per receipt.
import type { FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { treeHeadIntervalMs } from '../limits.ts';
import { publishTreeHeads } from '../receipts/transparency-log.ts';

export const treeHeads = fastifyPlugin(
  async (app: FastifyInstance, options: { enabled: boolean }) => {
    if (!options.enabled) return;
    let running: Promise<unknown> | undefined;
    const timer = setInterval(() => {
      if (running) return; // A slow pass is not overlapped by the next one.
      running = publishTreeHeads(app.database, app.gatewayKeys)
        .then((report) => {
          if (report.heads > 0) app.log.debug({ heads: report.heads }, 'signed transparency-log tree heads');
        })
        .catch((error: unknown) => app.log.error({ err: error }, 'tree-head pass failed'))
        .finally(() => {
          running = undefined;
        });
    }, treeHeadIntervalMs);
    timer.unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await running;
    });
  },
  { name: 'tree-heads', dependencies: ['database'] },
);
