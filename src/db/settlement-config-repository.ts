// Settlement configurations: one per tenant, replaced whole on every write (validated by rails/settlement-config.ts),
// stored per rail (migrations/0027_settlement_config_per_rail.sql): the rails listed, each rail's public values keyed
// by its name, and each rail's secrets sealed (src/infra/secret-box.ts), one row per rail and field. A write keeps,
// replaces or clears each secret; reads answer which are set, and only openRailSecrets, with the deployment's key,
// gives them back.
import type { Queryable, Statement } from '../infra/database.ts';
import { secretContext, type SecretBox } from '../infra/secret-box.ts';
import type { SettlementConfigInput, SecretChange } from '../rails/settlement-config.ts';
import type { RailName, RailSecrets, RailSettings, SettlementConfig } from '../rails/types.ts';

/** One stored secret, sealed. */
interface SealedSecret {
  readonly rail: RailName;
  readonly field: string;
  readonly sealed: Buffer;
}

/** A stored configuration with its sealed secrets, which never leave this layer except through openRailSecrets. */
export interface StoredSettlementConfig extends SettlementConfig {
  readonly sealedSecrets: readonly SealedSecret[];
}

interface SettlementConfigRow {
  rails: RailName[];
  rail_settings: Record<RailName, RailSettings>;
  updated_at: Date;
  /** The secrets as JSON (`sealed` in base64): one statement reads the configuration and its secrets. */
  secrets: { rail: RailName; field: string; sealed: string }[];
}

const selectConfig = `
  SELECT c.rails, c.rail_settings, c.updated_at,
         coalesce((SELECT jsonb_agg(jsonb_build_object('rail', s.rail, 'field', s.field, 'sealed', encode(s.sealed, 'base64')) ORDER BY s.rail, s.field)
                   FROM settlement_rail_secrets s WHERE s.tenant_id = c.tenant_id), '[]'::jsonb) AS secrets
  FROM settlement_configs c WHERE c.tenant_id = $1`;

const toSettlementConfig = (row: SettlementConfigRow): StoredSettlementConfig => {
  const sealedSecrets = row.secrets.map(({ rail, field, sealed }) => ({ rail, field, sealed: Buffer.from(sealed, 'base64') }));
  const config: StoredSettlementConfig = {
    rails: row.rails,
    settings: row.rail_settings,
    secretsSet: sealedSecrets.map(({ field }) => field),
    updated_at: row.updated_at.toISOString(),
    sealedSecrets: [],
  };
  // Not enumerable: a configuration serialized by mistake (a log line, an answer) carries no sealed secret either.
  Object.defineProperty(config, 'sealedSecrets', { enumerable: false, value: sealedSecrets });
  return config;
};

export function findSettlementConfigStatement(tenantId: string): Statement<StoredSettlementConfig | undefined> {
  return {
    text: selectConfig,
    values: [tenantId],
    read: ({ rows }) => rows[0] && toSettlementConfig(rows[0] as SettlementConfigRow),
  };
}

export function findSettlementConfig(tx: Queryable, tenantId: string): Promise<StoredSettlementConfig | undefined> {
  return tx.run(findSettlementConfigStatement(tenantId));
}

/** A secret a write changes, sealed: a value replaces the stored one, null clears it. */
export interface SealedSecretChange {
  readonly rail: RailName;
  readonly field: string;
  readonly sealed: Buffer | null;
}

/** Seals the secrets a write replaces (the box is required for any value; the caller checks it is there). */
export function sealSecretChanges(box: SecretBox | undefined, tenantId: string, changes: readonly SecretChange[]): SealedSecretChange[] {
  return changes.map(({ rail, field, value }) => {
    if (value === null) return { rail, field, sealed: null };
    if (!box) throw new Error('sealSecretChanges: a secret to store needs the secrets key');
    return { rail, field, sealed: box.seal(value, secretContext(tenantId, field)) };
  });
}

/** The tenant's secrets, opened, by rail then field. A secret stored but not openable (no key configured, or
 * another key) is a deployment error, thrown, never answered as "no secret". */
export function openRailSecrets(box: SecretBox | undefined, tenantId: string, config: StoredSettlementConfig | undefined): Record<RailName, RailSecrets> {
  const secrets: Record<RailName, Record<string, string>> = {};
  for (const { rail, field, sealed } of config?.sealedSecrets ?? []) {
    if (!box) throw new Error(`a ${field} is stored for a tenant but this deployment has no SVC_SECRETS_KEY to open it`);
    (secrets[rail] ??= {})[field] = box.open(sealed, secretContext(tenantId, field));
  }
  return secrets;
}

/** Creates or replaces the tenant's configuration; `updated_at` is the time of this write. Each secret is kept,
 * replaced or cleared as `secrets` says. */
export async function upsertSettlementConfig(
  tx: Queryable,
  tenantId: string,
  config: SettlementConfigInput,
  secrets: readonly SealedSecretChange[] = [],
): Promise<StoredSettlementConfig> {
  await tx.query(
    `INSERT INTO settlement_configs (tenant_id, rails, rail_settings) VALUES ($1, $2::text[], $3::jsonb)
     ON CONFLICT (tenant_id) DO UPDATE SET rails = EXCLUDED.rails, rail_settings = EXCLUDED.rail_settings, updated_at = now()`,
    [tenantId, config.rails, JSON.stringify(config.settings)],
  );
  for (const { rail, field, sealed } of secrets) {
    if (sealed === null) {
      await tx.query('DELETE FROM settlement_rail_secrets WHERE tenant_id = $1 AND rail = $2 AND field = $3', [tenantId, rail, field]);
    } else {
      await tx.query(
        `INSERT INTO settlement_rail_secrets (tenant_id, rail, field, sealed) VALUES ($1, $2, $3, $4)
         ON CONFLICT (tenant_id, rail, field) DO UPDATE SET sealed = EXCLUDED.sealed, updated_at = now()`,
        [tenantId, rail, field, sealed],
      );
    }
  }
  return (await findSettlementConfig(tx, tenantId))!;
}
