// Transparency-log routes under /harbor/ledger/v1/merkle (docs/protocol.md#transparency-log): the latest signed tree
// head, a leaf's inclusion proof, and the consistency proof between two tree sizes. Read-only, the caller's tenant.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { authenticatedErrors } from '../../../contracts/common.ts';
import { ConsistencyProof, InclusionProof, SignedTreeHead as SignedTreeHeadView, proofParameter } from '../../../contracts/ledger.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { principalOf } from '../../../plugins/access.ts';
import {
  latestTreeHead,
  leafAt,
  readConsistencyProof,
  readInclusionProof,
  treeHeadOfSize,
  type SignedTreeHead,
} from '../../../receipts/transparency-log.ts';
import type { Queryable } from '../../../infra/database.ts';

/** Who reads the ledger reads its log: operators and auditors. */
const readers = { access: { roles: ['admin', 'operator', 'auditor'] as const } };

/** Parameters arrive as text and are judged here, so each refusal has the log's own code. */
const textParameters = <N extends string>(names: readonly N[]) =>
  Type.Object(Object.fromEntries(names.map((name) => [name, proofParameter])) as Record<N, typeof proofParameter>, { additionalProperties: false });

function integerParameter(text: string | undefined, name: string, minimum: number, required = false): number | undefined {
  if (text === undefined && !required) return undefined;
  const value = text !== undefined && /^(0|[1-9][0-9]{0,15})$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < minimum) {
    throw new ServiceError('merkle.parameter_invalid', { details: { parameter: name, minimum } });
  }
  return value;
}

/** The latest head, which bounds every proof: sizes past it are not yet signed, so not yet provable. */
async function requireLatestHead(tx: Queryable, tenantId: string): Promise<SignedTreeHead> {
  const head = await latestTreeHead(tx, tenantId);
  if (head === null) throw new ServiceError('merkle.tree_head_missing');
  return head;
}

function assertWithinHead(size: number, head: SignedTreeHead, parameter: string): void {
  if (size > head.tree_size) {
    throw new ServiceError('merkle.tree_size_out_of_range', { details: { parameter, latest_tree_size: head.tree_size } });
  }
}

export async function merkleRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/ledger/v1/merkle/latest', { config: readers, schema: { summary: 'The latest signed tree head', response: { 200: SignedTreeHeadView, ...authenticatedErrors(404) } } }, async (request) => {
    const { tenantId } = principalOf(request);
    // Answered as signed, nothing added: the body saved as a file is a tree head `svc receipt verify` takes.
    return app.database.tenant(tenantId, (tx) => requireLatestHead(tx, tenantId));
  });

  app.get(
    '/ledger/v1/merkle/proof',
    {
      config: readers,
      schema: { summary: 'A leaf\'s inclusion proof', querystring: textParameters(['leaf_index', 'tree_size']), response: { 200: InclusionProof, ...authenticatedErrors(404, 422) } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const leafIndex = integerParameter(request.query.leaf_index, 'leaf_index', 0, true)!;
      const requestedSize = integerParameter(request.query.tree_size, 'tree_size', 1);
      return app.database.tenant(tenantId, async (tx) => {
        const latest = await requireLatestHead(tx, tenantId);
        const treeSize = requestedSize ?? latest.tree_size;
        assertWithinHead(treeSize, latest, 'tree_size');
        if (leafIndex >= treeSize) throw new ServiceError('merkle.leaf_out_of_range', { details: { leaf_index: leafIndex, tree_size: treeSize } });
        const leaf = (await leafAt(tx, tenantId, leafIndex))!;
        return {
          tenant_id: tenantId,
          leaf_index: leafIndex,
          tree_size: treeSize,
          kind: leaf.kind,
          artifact_id: leaf.artifactId,
          leaf_format: leaf.leafFormat,
          leaf_hash: leaf.leafHash.toString('hex'),
          inclusion_proof: await readInclusionProof(tx, tenantId, leafIndex, treeSize),
          // The signed head of exactly this size, when one was published (every head's size is provable).
          tree_head: treeSize === latest.tree_size ? latest : await treeHeadOfSize(tx, tenantId, treeSize),
        };
      });
    },
  );

  app.get(
    '/ledger/v1/merkle/consistency',
    {
      config: readers,
      schema: { summary: 'A consistency proof between two tree sizes', querystring: textParameters(['first', 'second']), response: { 200: ConsistencyProof, ...authenticatedErrors(404, 422) } },
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      const first = integerParameter(request.query.first, 'first', 1, true)!;
      const requestedSecond = integerParameter(request.query.second, 'second', 1);
      return app.database.tenant(tenantId, async (tx) => {
        const latest = await requireLatestHead(tx, tenantId);
        const second = requestedSecond ?? latest.tree_size;
        assertWithinHead(second, latest, 'second');
        if (first > second) throw new ServiceError('merkle.consistency_range_invalid', { details: { first, second } });
        return {
          tenant_id: tenantId,
          first,
          second,
          consistency_proof: await readConsistencyProof(tx, tenantId, first, second),
          first_tree_head: await treeHeadOfSize(tx, tenantId, first),
          second_tree_head: second === latest.tree_size ? latest : await treeHeadOfSize(tx, tenantId, second),
        };
      });
    },
  );
}
