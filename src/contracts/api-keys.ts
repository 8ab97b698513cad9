// Contracts of the service-account API key routes (/v1/admin/api-keys): the create body, the list query, the key as
// the routes answer it (never its secret, except once in the create answer).
import Type, { type Static } from 'typebox';
import {
  apiKeyNameLengthMax,
  apiKeyRotationOverlapSecondsDefault,
  apiKeyRotationOverlapSecondsMax,
  apiKeyScopeLengthMax,
  apiKeyScopesMax,
  pageSizeDefault,
  pageSizeMax,
} from '../limits.ts';
import { Nullable, Timestamp } from './common.ts';
import { apiKeyCreateBodyExample, apiKeyCreatedExample } from './examples.ts';
import { Environment, Role } from './principal.ts';

export const ApiKeyId = Type.String({ pattern: '^key_[0-9a-f]{32}$' });
export type ApiKeyId = Static<typeof ApiKeyId>;

const ScopeText = Type.String({ pattern: `^[a-z0-9][a-z0-9._:-]{0,${apiKeyScopeLengthMax - 1}}$` });
const KeyName = Type.String({ maxLength: apiKeyNameLengthMax });
const KeyKind = Type.Union([Type.Literal('standard'), Type.Literal('restricted')]);

/**
 * The create body. Ours is `{role, name?, scopes?}`; the public client's CLI sends `{service_account_name,
 * service_account_role, label, key_kind, mcp_scopes}`, with each scope as `{scope, level}`. Either spelling is taken
 * (src/services/api-key-service.ts, `apiKeyRequestOf`, says how they combine); `role` or `service_account_role` is
 * required, checked there.
 */
export const ApiKeyCreateBody = Type.Object(
  {
    role: Type.Optional(Role),
    name: Type.Optional(KeyName),
    scopes: Type.Optional(Type.Array(ScopeText, { maxItems: apiKeyScopesMax })),
    service_account_role: Type.Optional(Role),
    service_account_name: Type.Optional(KeyName),
    label: Type.Optional(KeyName),
    key_kind: Type.Optional(KeyKind),
    mcp_scopes: Type.Optional(Type.Array(
      Type.Union([
        ScopeText,
        Type.Object({ scope: Type.String({ minLength: 1, maxLength: apiKeyScopeLengthMax }), level: Type.Union([Type.Literal('read'), Type.Literal('write')]) }, { additionalProperties: false }),
      ]),
      { maxItems: apiKeyScopesMax },
    )),
  },
  { additionalProperties: false, examples: [apiKeyCreateBodyExample] },
);
export type ApiKeyCreateBody = Static<typeof ApiKeyCreateBody>;

export const ApiKeyListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: pageSizeMax, default: pageSizeDefault }),
    cursor: Type.Optional(ApiKeyId),
  },
  { additionalProperties: false },
);
export type ApiKeyListQuery = Static<typeof ApiKeyListQuery>;

export const ApiKeyParams = Type.Object({ key_id: ApiKeyId });
export type ApiKeyParams = Static<typeof ApiKeyParams>;

export const ApiKey = Type.Object(
  {
    object: Type.Literal('api_key'),
    key_id: ApiKeyId,
    role: Role,
    name: Type.String(),
    key_kind: KeyKind,
    scopes: Type.Array(Type.String()),
    environment: Environment,
    /** The public client's names for `role`, `name` and `scopes` (as the principal answers them). */
    service_account_role: Role,
    service_account_name: Type.String(),
    mcp_scopes: Type.Array(Type.String()),
    created_at: Timestamp,
    last_used_at: Nullable(Timestamp),
    revoked_at: Nullable(Timestamp),
  },
  { additionalProperties: false },
);
export type ApiKey = Static<typeof ApiKey>;

/** The create answer: the key record and, this once, the key itself; `item` repeats the record for the public
 * client's CLI, which reads it there. */
export const ApiKeyCreated = Type.Object(
  { ...ApiKey.properties, api_key: Type.String(), item: ApiKey },
  { additionalProperties: false, examples: [apiKeyCreatedExample] },
);
export type ApiKeyCreated = Static<typeof ApiKeyCreated>;

/** A page of keys: `data`, and `items` (the same keys) for the public client's CLI, which lists from it. */
export const ApiKeyPage = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(ApiKey),
    items: Type.Array(ApiKey),
    has_more: Type.Boolean(),
    next_cursor: Nullable(ApiKeyId),
  },
  { additionalProperties: false },
);
export type ApiKeyPage = Static<typeof ApiKeyPage>;

/** The rotate body, optional as a whole (the public client sends none). */
export const ApiKeyRotateBody = Type.Object(
  {
    /** How long the replaced secret keeps working: 0 ends it at once (a leaked key). */
    previous_secret_expires_in_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: apiKeyRotationOverlapSecondsMax, default: apiKeyRotationOverlapSecondsDefault })),
  },
  { additionalProperties: false },
);
export type ApiKeyRotateBody = Static<typeof ApiKeyRotateBody>;

/** The rotate answer: the new key, this once, with the key record (also as `item`, where the public client reads it). */
export const ApiKeyRotated = Type.Object(
  {
    object: Type.Literal('api_key_rotation'),
    key_id: ApiKeyId,
    api_key: Type.String(),
    rotated_at: Timestamp,
    /** Until when the replaced secret still authenticates (`rotated_at` when it stopped at once). */
    previous_secret_expires_at: Timestamp,
    item: ApiKey,
  },
  { additionalProperties: false },
);
export type ApiKeyRotated = Static<typeof ApiKeyRotated>;
