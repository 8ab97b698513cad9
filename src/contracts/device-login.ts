// Contracts of device login (RFC 8628, docs/sign-in.md#device-login): the device's two public routes (a code, then
// the token poll, whose refusals take the RFC's OAuth error shape) and the approver's two session routes.
import Type, { type Static } from 'typebox';
import { deviceClientNameLengthMax, deviceUserCodeInputLengthMax } from '../limits.ts';
import { Nullable, Timestamp } from './common.ts';
import { Role } from './principal.ts';
import { SessionGrant } from './sign-in.ts';

/** A user code as typed (`BCDF-GHJK`, any case, with or without the dash). */
const UserCodeInput = Type.String({ minLength: 1, maxLength: deviceUserCodeInputLengthMax });

/** What the device calls itself, shown to the approver: printable, no control characters (C0, DEL and C1, the Unicode
 * category Cc, as the column's CHECK refuses them). */
const ClientName = Type.String({ minLength: 1, maxLength: deviceClientNameLengthMax, pattern: '^\\P{Cc}+$' });

export const DeviceCodeBody = Type.Object(
  {
    client_name: Type.Optional(ClientName),
    /** RFC 8628 clients send their client_id; there is no client registry, so it is accepted and not used. */
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: deviceClientNameLengthMax })),
  },
  { additionalProperties: false },
);
export type DeviceCodeBody = Static<typeof DeviceCodeBody>;

/** `POST /v1/public/auth/device/start`: a device login that asks by name for an API key of an environment and a role
 * (the public client's `login`), instead of the approver's session. */
export const DeviceStartBody = Type.Object(
  {
    client_name: Type.Optional(ClientName),
    client_id: Type.Optional(Type.String({ minLength: 1, maxLength: deviceClientNameLengthMax })),
    requested_environment: Type.Union([Type.Literal('sandbox'), Type.Literal('live')]),
    service_account_role: Type.Optional(Role),
  },
  { additionalProperties: false },
);
export type DeviceStartBody = Static<typeof DeviceStartBody>;

export const DeviceCode = Type.Object(
  {
    device_code: Type.String(),
    user_code: Type.String(),
    verification_uri: Type.String(),
    verification_uri_complete: Type.String(),
    expires_in: Type.Integer({ minimum: 1 }),
    interval: Type.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);
export type DeviceCode = Static<typeof DeviceCode>;

/** The token answer: a session, or in a sandbox tenant an API key (which does not expire, so no expires_in). */
export const DeviceToken = Type.Union([
  Type.Object({ ...SessionGrant.properties, credential_type: Type.Literal('session') }, { additionalProperties: false }),
  Type.Object(
    {
      access_token: Type.String(),
      token_type: Type.Literal('Bearer'),
      credential_type: Type.Literal('api_key'),
      tenant_id: Type.String(),
      tenant_uuid: Type.String(),
      environment: Type.Union([Type.Literal('sandbox'), Type.Literal('live')]),
      key_id: Type.String(),
      /** The key's role, also as `roles` (the public client reads this one). */
      service_account_role: Role,
      roles: Type.Array(Type.String()),
    },
    { additionalProperties: false },
  ),
]);
export type DeviceToken = Static<typeof DeviceToken>;

/** A refused token poll in RFC 6749 section 5.2's shape, with our catalogue code and the request id; `interval` with
 * slow_down. */
export const DeviceTokenRefusal = Type.Object(
  {
    error: Type.Enum(['invalid_request', 'unsupported_grant_type', 'invalid_grant', 'authorization_pending', 'slow_down', 'access_denied', 'expired_token']),
    error_description: Type.String(),
    code: Type.String(),
    interval: Type.Optional(Type.Integer({ minimum: 1 })),
    request_id: Type.String(),
  },
  { additionalProperties: false },
);
export type DeviceTokenRefusal = Static<typeof DeviceTokenRefusal>;

export const UserCodeParams = Type.Object({ user_code: UserCodeInput });
export type UserCodeParams = Static<typeof UserCodeParams>;

export const DeviceDecisionBody = Type.Object(
  {
    user_code: UserCodeInput,
    decision: Type.Union([Type.Literal('approve'), Type.Literal('deny')]),
    /** What an approval grants: the approver's session (default), or in a sandbox tenant an API key of key_role. */
    grant: Type.Optional(Type.Union([Type.Literal('session'), Type.Literal('api_key')])),
    key_role: Type.Optional(Role),
  },
  { additionalProperties: false },
);
export type DeviceDecisionBody = Static<typeof DeviceDecisionBody>;

export const DeviceLogin = Type.Object(
  {
    object: Type.Literal('device_login'),
    user_code: Type.String(),
    client_name: Nullable(Type.String()),
    status: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('denied')]),
    created_at: Timestamp,
    expires_at: Timestamp,
    decided_at: Nullable(Timestamp),
    grant: Type.Union([Type.Literal('session'), Type.Literal('api_key')]),
    key_role: Nullable(Role),
    /** What a device started with /device/start asks for by name (then `grant` is `api_key` of this role). */
    requested_environment: Nullable(Type.Union([Type.Literal('sandbox'), Type.Literal('live')])),
    requested_key_role: Nullable(Role),
  },
  { additionalProperties: false },
);
export type DeviceLogin = Static<typeof DeviceLogin>;
