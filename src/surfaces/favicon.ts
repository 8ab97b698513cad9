// GET /favicon.ico: the console's icon at the address every browser asks a site for, so that no page this service
// serves (the console's, the API reference at /docs, a JSON answer opened in a tab) draws a 404 for it.
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { publicErrors } from '../contracts/common.ts';

/** An SVG, which every current browser takes as a site icon; served under the name browsers ask for. */
const icon = fs.readFileSync(new URL('./console/assets/favicon.svg', import.meta.url));

export async function faviconRoute(app: FastifyInstance): Promise<void> {
  app.get(
    '/favicon.ico',
    {
      config: { access: { public: true } },
      schema: {
        summary: 'The service\'s icon (SVG)',
        response: { 200: { description: 'The icon, as SVG.', content: { 'image/svg+xml': { schema: Type.String() } } }, ...publicErrors() },
      },
    },
    async (_request, reply) => reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(icon),
  );
}
