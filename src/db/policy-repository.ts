// Tenant policies: version allocation, immutable versions, the head per template and its move history.
import type { Queryable } from '../infra/database.ts';

export interface PolicyVersion {
  readonly templateId: string;
  readonly versionSeq: number;
  readonly parameters: Record<string, unknown>;
  readonly materializedPredicate: Record<string, unknown>;
  readonly humanSummary: string;
  readonly contentDigest: Buffer;
  readonly createdAt: Date;
}

interface PolicyVersionRow {
  template_id: string;
  version_seq: number;
  parameters: Record<string, unknown>;
  materialized_predicate: Record<string, unknown>;
  human_summary: string;
  content_digest: Buffer;
  created_at: Date;
}

const versionColumns = 'template_id, version_seq, parameters, materialized_predicate, human_summary, content_digest, created_at';

const toVersion = (row: PolicyVersionRow): PolicyVersion => ({
  templateId: row.template_id,
  versionSeq: row.version_seq,
  parameters: row.parameters,
  materializedPredicate: row.materialized_predicate,
  humanSummary: row.human_summary,
  contentDigest: row.content_digest,
  createdAt: row.created_at,
});

/** Takes the next version number of a template; concurrent callers queue on the template's row. */
export async function allocateVersionSeq(tx: Queryable, tenantId: string, templateId: string): Promise<number> {
  const { rows } = await tx.query<{ last_version_seq: number }>(
    `INSERT INTO policy_templates (tenant_id, template_id, last_version_seq) VALUES ($1, $2, 1)
     ON CONFLICT (tenant_id, template_id)
     DO UPDATE SET last_version_seq = policy_templates.last_version_seq + 1, updated_at = now()
     RETURNING last_version_seq`,
    [tenantId, templateId],
  );
  return rows[0]!.last_version_seq;
}

export async function insertPolicyVersion(tx: Queryable, tenantId: string, version: Omit<PolicyVersion, 'createdAt'>): Promise<PolicyVersion> {
  const { rows } = await tx.query<PolicyVersionRow>(
    `INSERT INTO policy_versions (tenant_id, template_id, version_seq, parameters, materialized_predicate, human_summary, content_digest)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${versionColumns}`,
    [
      tenantId,
      version.templateId,
      version.versionSeq,
      JSON.stringify(version.parameters),
      JSON.stringify(version.materializedPredicate),
      version.humanSummary,
      version.contentDigest,
    ],
  );
  return toVersion(rows[0]!);
}

export async function findPolicyVersion(
  tx: Queryable,
  tenantId: string,
  templateId: string,
  by: { versionSeq: number } | { contentDigest: Buffer },
): Promise<PolicyVersion | undefined> {
  const [column, value] = 'versionSeq' in by ? ['version_seq', by.versionSeq] : ['content_digest', by.contentDigest];
  const { rows } = await tx.query<PolicyVersionRow>(
    `SELECT ${versionColumns} FROM policy_versions WHERE tenant_id = $1 AND template_id = $2 AND ${column} = $3`,
    [tenantId, templateId, value],
  );
  return rows[0] && toVersion(rows[0]);
}

/** Newest first; `beforeSeq` pages backwards. */
export async function listPolicyVersions(
  tx: Queryable,
  tenantId: string,
  templateId: string,
  page: { limit: number; beforeSeq?: number | undefined },
): Promise<{ versions: PolicyVersion[]; hasMore: boolean }> {
  const { rows } = await tx.query<PolicyVersionRow>(
    `SELECT ${versionColumns} FROM policy_versions
     WHERE tenant_id = $1 AND template_id = $2 AND ($3::integer IS NULL OR version_seq < $3)
     ORDER BY version_seq DESC LIMIT $4`,
    [tenantId, templateId, page.beforeSeq ?? null, page.limit + 1],
  );
  return { versions: rows.slice(0, page.limit).map(toVersion), hasMore: rows.length > page.limit };
}

export interface PolicyHead {
  readonly versionSeq: number;
  readonly contentDigest: Buffer;
}

/** The head of a template, locked for the rest of the transaction when it is about to move. */
export async function findPolicyHead(
  tx: Queryable,
  tenantId: string,
  templateId: string,
  options: { forUpdate?: boolean } = {},
): Promise<PolicyHead | undefined> {
  const { rows } = await tx.query<{ version_seq: number; content_digest: Buffer }>(
    `SELECT v.version_seq, v.content_digest
     FROM policy_templates t JOIN policy_versions v
       ON v.tenant_id = t.tenant_id AND v.template_id = t.template_id AND v.version_seq = t.head_version_seq
     WHERE t.tenant_id = $1 AND t.template_id = $2
     ${options.forUpdate ? 'FOR UPDATE OF t' : ''}`,
    [tenantId, templateId],
  );
  return rows[0] && { versionSeq: rows[0].version_seq, contentDigest: rows[0].content_digest };
}

export async function moveHead(
  tx: Queryable,
  tenantId: string,
  move: { templateId: string; fromVersionSeq: number | null; toVersionSeq: number; action: 'rollout' | 'rollback'; actor: string },
): Promise<void> {
  await tx.query(
    `UPDATE policy_templates SET head_version_seq = $3, updated_at = now() WHERE tenant_id = $1 AND template_id = $2`,
    [tenantId, move.templateId, move.toVersionSeq],
  );
  await tx.query(
    `INSERT INTO policy_head_moves (tenant_id, template_id, action, from_version_seq, to_version_seq, actor)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [tenantId, move.templateId, move.action, move.fromVersionSeq, move.toVersionSeq, move.actor],
  );
}
