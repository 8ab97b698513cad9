// `svc key register`: registers an Ed25519 public key for a tenant's agent, principal or operator, through the same
// service code as POST /v1/registry/keys. Live tenants must register agent keys before their proofs are accepted.
import { registeredKeyKinds, type RegisteredKeyKind } from '../../db/registered-key-repository.ts';
import { presentRegisteredKey, registerKey } from '../../services/key-registry-service.ts';
import { print, requiredOption, UsageError, usageOf, withDatabase, type CliCommand } from '../command.ts';

/** 32 raw bytes as lowercase hex, from hex (any case) or base64 / base64url (padded or not). Anything else is passed
 * through unchanged, for the service to refuse as `registry.public_key_invalid` exactly as the route does. */
export function publicKeyHexOf(text: string): string {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return text.toLowerCase();
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(text)) {
    const bytes = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === 32) return bytes.toString('hex');
  }
  return text;
}

export const keyRegister: CliCommand = {
  name: 'key register',
  summary: 'Registers an Ed25519 public key for a tenant, as POST /v1/registry/keys does.',
  synopsis: `--tenant-id ID --key-id K --public-key HEX|BASE64 --kind ${registeredKeyKinds.join('|')} [--json]`,
  details: [
    '--tenant-id ID          the tenant the key belongs to',
    '--key-id K              the subject: for an agent, the key_id its recognition proofs name',
    '--public-key KEY        the raw 32-byte Ed25519 public key, as 64 hex digits or base64 / base64url',
    `--kind KIND             ${registeredKeyKinds.join(', ')}`,
    '--json                  print the registered key as the registry route shows it, as one JSON line',
    '',
    'Live tenants must register an agent\'s key before its recognition proofs are accepted; sandbox tenants register',
    'a key on its first use.',
  ],
  options: { 'tenant-id': { type: 'string' }, 'key-id': { type: 'string' }, 'public-key': { type: 'string' }, kind: { type: 'string' } },
  async run({ options, json, config }) {
    const tenantId = requiredOption(keyRegister, options, 'tenant-id');
    const subject = requiredOption(keyRegister, options, 'key-id');
    const publicKeyHex = publicKeyHexOf(requiredOption(keyRegister, options, 'public-key'));
    const kind = requiredOption(keyRegister, options, 'kind');
    if (!(registeredKeyKinds as readonly string[]).includes(kind)) {
      throw new UsageError(`--kind must be one of ${registeredKeyKinds.join(', ')}`, usageOf(keyRegister));
    }
    const key = await withDatabase(config, (database) =>
      registerKey(database, tenantId, { kind: kind as RegisteredKeyKind, subject, publicKeyHex, registeredBy: 'cli' }),
    );
    const shown = presentRegisteredKey(key);
    print(json, shown, `${shown.kind} key ${shown.subject} registered for ${tenantId} as ${shown.id}\npublic key ${shown.public_key_ed25519_hex}`);
  },
};
