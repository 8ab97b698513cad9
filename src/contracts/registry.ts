// Contracts of the tenant key registry routes (/v1/registry/keys): register, list and revoke the Ed25519 public keys
// of the tenant's principals, agents and operators.
import Type, { type Static } from 'typebox';
import { pageSizeDefault, pageSizeMax, registeredKeySubjectLengthMax } from '../limits.ts';
import { Nullable, Timestamp } from './common.ts';

export const registeredKeyKinds = ['principal', 'agent', 'operator'] as const;
export const RegisteredKeyKind = Type.Enum(registeredKeyKinds);
export type RegisteredKeyKind = Static<typeof RegisteredKeyKind>;
/** How a key came to be registered: the registry route, the operator CLI, or a sandbox agent key's first valid
 * recognition proof (migrations/0013_first_use_keys.sql). */
export const keyRegistrationSources = ['api', 'cli', 'first_use'] as const;
export const KeyRegistrationSource = Type.Enum(keyRegistrationSources);
export type KeyRegistrationSource = Static<typeof KeyRegistrationSource>;

export const RegisteredKeyId = Type.String({ pattern: '^rkey_[0-9a-f]{32}$' });
export type RegisteredKeyId = Static<typeof RegisteredKeyId>;
const Subject = Type.String({ minLength: 1, maxLength: registeredKeySubjectLengthMax });

export const RegisteredKeyCreateBody = Type.Object(
  {
    kind: RegisteredKeyKind,
    subject: Subject,
    public_key_ed25519_hex: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  },
  { additionalProperties: false },
);
export type RegisteredKeyCreateBody = Static<typeof RegisteredKeyCreateBody>;

export const RegisteredKeyListQuery = Type.Object(
  {
    kind: Type.Optional(RegisteredKeyKind),
    subject: Type.Optional(Subject),
    registered_by: Type.Optional(KeyRegistrationSource),
    limit: Type.Integer({ minimum: 1, maximum: pageSizeMax, default: pageSizeDefault }),
    cursor: Type.Optional(RegisteredKeyId),
  },
  { additionalProperties: false },
);
export type RegisteredKeyListQuery = Static<typeof RegisteredKeyListQuery>;

export const RegisteredKeyParams = Type.Object({ id: RegisteredKeyId });
export type RegisteredKeyParams = Static<typeof RegisteredKeyParams>;

export const RegisteredKey = Type.Object(
  {
    object: Type.Literal('registered_key'),
    id: RegisteredKeyId,
    kind: RegisteredKeyKind,
    subject: Type.String(),
    public_key_ed25519_hex: Type.String(),
    registered_by: KeyRegistrationSource,
    created_at: Timestamp,
    revoked_at: Nullable(Timestamp),
  },
  { additionalProperties: false },
);
export type RegisteredKey = Static<typeof RegisteredKey>;

export const RegisteredKeyPage = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(RegisteredKey),
    has_more: Type.Boolean(),
    next_cursor: Nullable(RegisteredKeyId),
  },
  { additionalProperties: false },
);
export type RegisteredKeyPage = Static<typeof RegisteredKeyPage>;
