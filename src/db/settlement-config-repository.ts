// Settlement configurations: one per tenant, replaced whole on every write (validated by rails/settlement-config.ts).
// The live rails' secrets are stored sealed (src/infra/secret-box.ts): a write keeps, replaces or clears each one;
// reads answer whether one is set, and only openRailSecrets, with the deployment's key, gives them back.
import type { Queryable, Statement } from '../infra/database.ts';
import { secretContext, type SecretBox } from '../infra/secret-box.ts';
import type { RailSecretField, SecretChanges, SettlementConfig } from '../rails/settlement-config.ts';
import type { RailName, RailSecrets } from '../rails/types.ts';

/** A stored configuration with its sealed secrets, which never leave this layer except through openRailSecrets. */
export interface StoredSettlementConfig extends SettlementConfig {
  readonly sealedSecrets: Readonly<Record<RailSecretField, Buffer | null>>;
}

interface SettlementConfigRow {
  rails: RailName[];
  x402_address: string | null;
  mpp_profile_id: string | null;
  mpp_session_enabled: boolean;
  settlement_network_recipient: string | null;
  processor_destination: string | null;
  x402_facilitator_url: string | null;
  mpp_processor_url: string | null;
  x402_facilitator_api_key_sealed: Buffer | null;
  mpp_processor_secret_key_sealed: Buffer | null;
  updated_at: Date;
}

const columns =
  'rails, x402_address, mpp_profile_id, mpp_session_enabled, settlement_network_recipient, processor_destination, ' +
  'x402_facilitator_url, mpp_processor_url, x402_facilitator_api_key_sealed, mpp_processor_secret_key_sealed, updated_at';

const toSettlementConfig = (row: SettlementConfigRow): StoredSettlementConfig => {
  const config: StoredSettlementConfig = {
    rails: row.rails,
    x402_address: row.x402_address,
    mpp_profile_id: row.mpp_profile_id,
    mpp_session_enabled: row.mpp_session_enabled,
    settlement_network_recipient: row.settlement_network_recipient,
    processor_destination: row.processor_destination,
    x402_facilitator_url: row.x402_facilitator_url,
    mpp_processor_url: row.mpp_processor_url,
    x402_facilitator_api_key_set: row.x402_facilitator_api_key_sealed !== null,
    mpp_processor_secret_key_set: row.mpp_processor_secret_key_sealed !== null,
    updated_at: row.updated_at.toISOString(),
    sealedSecrets: { x402_facilitator_api_key: null, mpp_processor_secret_key: null },
  };
  // Not enumerable: a configuration serialized by mistake (a log line, an answer) carries no sealed secret either.
  Object.defineProperty(config, 'sealedSecrets', {
    enumerable: false,
    value: { x402_facilitator_api_key: row.x402_facilitator_api_key_sealed, mpp_processor_secret_key: row.mpp_processor_secret_key_sealed },
  });
  return config;
};

export function findSettlementConfigStatement(tenantId: string): Statement<StoredSettlementConfig | undefined> {
  return {
    text: `SELECT ${columns} FROM settlement_configs WHERE tenant_id = $1`,
    values: [tenantId],
    read: ({ rows }) => rows[0] && toSettlementConfig(rows[0] as SettlementConfigRow),
  };
}

export function findSettlementConfig(tx: Queryable, tenantId: string): Promise<StoredSettlementConfig | undefined> {
  return tx.run(findSettlementConfigStatement(tenantId));
}

/** The sealed form of each secret a write changes: undefined keeps the stored one, null clears it. */
export type SealedSecretChanges = Readonly<Record<RailSecretField, Buffer | null | undefined>>;

/** Seals the secrets a write replaces (the box is required for any string; the caller checks it is there). */
export function sealSecretChanges(box: SecretBox | undefined, tenantId: string, changes: SecretChanges): SealedSecretChanges {
  const seal = (field: RailSecretField): Buffer | null | undefined => {
    const value = changes[field];
    if (value === undefined || value === null) return value;
    if (!box) throw new Error('sealSecretChanges: a secret to store needs the secrets key');
    return box.seal(value, secretContext(tenantId, field));
  };
  return { x402_facilitator_api_key: seal('x402_facilitator_api_key'), mpp_processor_secret_key: seal('mpp_processor_secret_key') };
}

/** The tenant's secrets, opened. A secret stored but not openable (no key configured, or another key) is a
 * deployment error, thrown, never answered as "no secret". */
export function openRailSecrets(box: SecretBox | undefined, tenantId: string, config: StoredSettlementConfig | undefined): RailSecrets {
  const open = (field: RailSecretField): string | null => {
    const sealed = config?.sealedSecrets[field] ?? null;
    if (sealed === null) return null;
    if (!box) throw new Error(`a ${field} is stored for a tenant but this deployment has no SVC_SECRETS_KEY to open it`);
    return box.open(sealed, secretContext(tenantId, field));
  };
  return { x402_facilitator_api_key: open('x402_facilitator_api_key'), mpp_processor_secret_key: open('mpp_processor_secret_key') };
}

/** Creates or replaces the tenant's configuration; `updated_at` is the time of this write. Each secret is kept,
 * replaced or cleared as `secrets` says. */
export async function upsertSettlementConfig(
  tx: Queryable,
  tenantId: string,
  config: SettlementConfig,
  secrets: SealedSecretChanges = { x402_facilitator_api_key: undefined, mpp_processor_secret_key: undefined },
): Promise<StoredSettlementConfig> {
  // $10/$12: whether to take the new sealed value ($11/$13) or keep the stored one.
  const { rows } = await tx.query<SettlementConfigRow>(
    `INSERT INTO settlement_configs AS current
       (tenant_id, rails, x402_address, mpp_profile_id, mpp_session_enabled, settlement_network_recipient, processor_destination,
        x402_facilitator_url, mpp_processor_url, x402_facilitator_api_key_sealed, mpp_processor_secret_key_sealed)
     VALUES ($1, $2::text[], $3, $4, $5, $6, $7, $8, $9, $11, $13)
     ON CONFLICT (tenant_id) DO UPDATE SET
       rails = EXCLUDED.rails,
       x402_address = EXCLUDED.x402_address,
       mpp_profile_id = EXCLUDED.mpp_profile_id,
       mpp_session_enabled = EXCLUDED.mpp_session_enabled,
       settlement_network_recipient = EXCLUDED.settlement_network_recipient,
       processor_destination = EXCLUDED.processor_destination,
       x402_facilitator_url = EXCLUDED.x402_facilitator_url,
       mpp_processor_url = EXCLUDED.mpp_processor_url,
       x402_facilitator_api_key_sealed = CASE WHEN $10::boolean THEN EXCLUDED.x402_facilitator_api_key_sealed ELSE current.x402_facilitator_api_key_sealed END,
       mpp_processor_secret_key_sealed = CASE WHEN $12::boolean THEN EXCLUDED.mpp_processor_secret_key_sealed ELSE current.mpp_processor_secret_key_sealed END,
       updated_at = now()
     RETURNING ${columns.split(', ').map((column) => `current.${column}`).join(', ')}`,
    [
      tenantId,
      config.rails,
      config.x402_address,
      config.mpp_profile_id,
      config.mpp_session_enabled,
      config.settlement_network_recipient,
      config.processor_destination,
      config.x402_facilitator_url,
      config.mpp_processor_url,
      secrets.x402_facilitator_api_key !== undefined,
      secrets.x402_facilitator_api_key ?? null,
      secrets.mpp_processor_secret_key !== undefined,
      secrets.mpp_processor_secret_key ?? null,
    ],
  );
  return toSettlementConfig(rows[0]!);
}
