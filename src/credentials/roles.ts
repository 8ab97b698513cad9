// The roles a credential can hold (docs/roles.md). The spec names none, so these are ours.
export const roles = ['admin', 'operator', 'agent', 'auditor'] as const;
export type Role = (typeof roles)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (roles as readonly string[]).includes(value);
}
