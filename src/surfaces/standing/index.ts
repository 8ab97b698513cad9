// The standing service surface: signed operator receipts (/reputation) and signed portfolio exports (/signal/v1),
// scoped to one tenant.
import type { FastifyInstance } from 'fastify';

export async function standing(_app: FastifyInstance): Promise<void> {
  // Routes arrive with the standing-service issue.
}
