// POST /v1/public/analytics/kit-cli: the usage report the public client's CLI sends its vendor after a successful dev
// command, when pointed at a gateway that is not on loopback. A self-hosted service keeps no client telemetry: the
// report is checked and dropped, and is seen only as one request among the others in the request metrics
// (docs/wire-compatibility.md#what-the-client-calls).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { ClientCliReport, ClientReportAnswer } from '../../../contracts/client-reports.ts';
import { publicBodyErrors } from '../../../contracts/common.ts';
import { clientReportBytesMax } from '../../../limits.ts';

export async function clientReportRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/v1/public/analytics/kit-cli',
    {
      config: { access: { public: true } },
      bodyLimit: clientReportBytesMax,
      schema: { summary: 'The public client\'s CLI usage report: checked and dropped', body: ClientCliReport, response: { 202: ClientReportAnswer, ...publicBodyErrors() } },
    },
    async (_request, reply) => reply.code(202).send({ object: 'client_report', stored: false } as const),
  );
}
