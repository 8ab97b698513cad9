// Routes that check their body in the handler (`attachValidation: true`: a version gate comes first, or an absent
// body is allowed) get every validation failure attached instead of raised. The body's is theirs to judge; a bad
// path parameter, query or header must still be refused before the handler reaches the database.
import type { FastifyRequest } from 'fastify';

export function refuseAttachedNonBodyError(request: FastifyRequest): void {
  if (request.validationError && request.validationError.validationContext !== 'body') throw request.validationError;
}
