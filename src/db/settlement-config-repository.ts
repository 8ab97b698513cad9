// Settlement configurations: one per tenant, replaced whole on every write (validated by rails/settlement-config.ts).
import type { Queryable, Statement } from '../infra/database.ts';
import type { SettlementConfig } from '../rails/settlement-config.ts';
import type { RailName } from '../rails/types.ts';

interface SettlementConfigRow {
  rails: RailName[];
  x402_address: string | null;
  mpp_profile_id: string | null;
  mpp_session_enabled: boolean;
  settlement_network_recipient: string | null;
  processor_destination: string | null;
  updated_at: Date;
}

const columns = 'rails, x402_address, mpp_profile_id, mpp_session_enabled, settlement_network_recipient, processor_destination, updated_at';

const toSettlementConfig = (row: SettlementConfigRow): SettlementConfig => ({
  rails: row.rails,
  x402_address: row.x402_address,
  mpp_profile_id: row.mpp_profile_id,
  mpp_session_enabled: row.mpp_session_enabled,
  settlement_network_recipient: row.settlement_network_recipient,
  processor_destination: row.processor_destination,
  updated_at: row.updated_at.toISOString(),
});

export function findSettlementConfigStatement(tenantId: string): Statement<SettlementConfig | undefined> {
  return {
    text: `SELECT ${columns} FROM settlement_configs WHERE tenant_id = $1`,
    values: [tenantId],
    read: ({ rows }) => rows[0] && toSettlementConfig(rows[0] as SettlementConfigRow),
  };
}

export function findSettlementConfig(tx: Queryable, tenantId: string): Promise<SettlementConfig | undefined> {
  return tx.run(findSettlementConfigStatement(tenantId));
}

/** Creates or replaces the tenant's configuration; `updated_at` is the time of this write. */
export async function upsertSettlementConfig(tx: Queryable, tenantId: string, config: SettlementConfig): Promise<SettlementConfig> {
  const { rows } = await tx.query<SettlementConfigRow>(
    `INSERT INTO settlement_configs AS current
       (tenant_id, rails, x402_address, mpp_profile_id, mpp_session_enabled, settlement_network_recipient, processor_destination)
     VALUES ($1, $2::text[], $3, $4, $5, $6, $7)
     ON CONFLICT (tenant_id) DO UPDATE SET
       rails = EXCLUDED.rails,
       x402_address = EXCLUDED.x402_address,
       mpp_profile_id = EXCLUDED.mpp_profile_id,
       mpp_session_enabled = EXCLUDED.mpp_session_enabled,
       settlement_network_recipient = EXCLUDED.settlement_network_recipient,
       processor_destination = EXCLUDED.processor_destination,
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
    ],
  );
  return toSettlementConfig(rows[0]!);
}
