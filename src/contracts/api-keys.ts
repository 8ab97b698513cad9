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
import { Role } from './principal.ts';

export const ApiKeyId = Type.String({ pattern: '^key_[0-9a-f]{32}$' });
export type ApiKeyId = Static<typeof ApiKeyId>;

export const ApiKeyCreateBody = Type.Object(
  {
    role: Role,
    name: Type.Optional(Type.String({ maxLength: apiKeyNameLengthMax })),
    scopes: Type.Optional(Type.Array(Type.String({ pattern: `^[a-z0-9][a-z0-9._:-]{0,${apiKeyScopeLengthMax - 1}}$` }), { maxItems: apiKeyScopesMax })),
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
    key_kind: Type.Union([Type.Literal('standard'), Type.Literal('restricted')]),
    scopes: Type.Array(Type.String()),
    created_at: Timestamp,
    last_used_at: Nullable(Timestamp),
    revoked_at: Nullable(Timestamp),
  },
  { additionalProperties: false },
);
export type ApiKey = Static<typeof ApiKey>;

/** The create answer: the key record and, this once, the key itself. */
export const ApiKeyCreated = Type.Object({ ...ApiKey.properties, api_key: Type.String() }, { additionalProperties: false, examples: [apiKeyCreatedExample] });
export type ApiKeyCreated = Static<typeof ApiKeyCreated>;

export const ApiKeyPage = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(ApiKey),
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
