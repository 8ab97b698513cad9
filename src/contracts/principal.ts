// Contract of GET /v1/auth/principal: who the credential is, and the tenant realm every later call is scoped to;
// and the roles a credential can hold (docs/roles.md), which the routes that name a role take.
import Type, { type Static } from 'typebox';
import { principalExample } from './examples.ts';

/** The roles a credential can hold (docs/roles.md). The spec names none, so these are ours. */
export const roles = ['admin', 'operator', 'agent', 'auditor'] as const;
export const Role = Type.Enum(roles);
export type Role = Static<typeof Role>;

export const Environment = Type.Union([Type.Literal('sandbox'), Type.Literal('live')]);
export type Environment = Static<typeof Environment>;

export const Principal = Type.Object({
  tenant_id: Type.String(),
  tenant_uuid: Type.String(),
  environment: Environment,
  service_account_role: Role,
  roles: Type.Array(Role),
  key_kind: Type.Union([Type.Literal('standard'), Type.Literal('restricted'), Type.Literal('session')], {
    description: '`session` for a person\'s session token.',
  }),
  mcp_scopes: Type.Array(Type.String()),
  subject: Type.String({ description: 'The key id of an API key, the user id of a session.' }),
}, { examples: [principalExample] });
export type Principal = Static<typeof Principal>;
