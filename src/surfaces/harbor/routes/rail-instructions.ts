// POST /harbor/intents/{id}/rail-instructions/{instruction_id}/done: the operator records a payout or refund it
// carried out itself (docs/rails.md "Rail instructions and the sweeper"). On x402 the escrow is the tenant's own
// wallet, so the transfer an instruction asks for is the operator's to make; this is where its transaction is
// reconciled with the ledger, and the sweeper stops asking.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { authenticatedBodyErrors } from '../../../contracts/common.ts';
import { RailInstruction, RailInstructionDoneBody, RailInstructionParams } from '../../../contracts/intents.ts';
import { recordInstructionDoneByOperator } from '../../../db/rail-instruction-repository.ts';
import { recordInstructionOutcomeEvent } from '../../../engine/intent-events.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { settlerRoles } from '../../../engine/lifecycle.ts';
import { principalOf } from '../../../plugins/access.ts';
import { presentRailInstruction } from '../present-intent.ts';

export async function railInstructionRoutes(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/intents/:intent_id/rail-instructions/:instruction_id/done',
    {
      // Whoever may settle an intent may record that its settlement's transfer was made.
      config: { access: { roles: settlerRoles, scope: 'mcp.settlement:write' } },
      schema: {
        summary: 'Record a payout or refund the operator carried out itself',
        params: RailInstructionParams,
        body: RailInstructionDoneBody,
        response: { 200: RailInstruction, ...authenticatedBodyErrors(404, 409) },
      },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const { intent_id: intentId, instruction_id: instructionId } = request.params;
      const recorded = await app.database.tenant(tenantId, async (tx) => {
        const done = await recordInstructionDoneByOperator(tx, tenantId, intentId.toLowerCase(), instructionId.toLowerCase(), request.body.reference);
        if (done?.changed) recordInstructionOutcomeEvent(tx, done.instruction);
        return done;
      });
      if (!recorded) throw new ServiceError('rail_instruction.not_found');
      if (!recorded.changed && recorded.instruction.reference !== request.body.reference) {
        throw new ServiceError('rail_instruction.already_succeeded', { details: { reference: recorded.instruction.reference } });
      }
      // The same reference again is a retry of this record: answered as it stands.
      return presentRailInstruction(recorded.instruction);
    },
  );
}
