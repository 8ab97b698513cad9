// The roles a credential can hold (docs/roles.md). The spec names none, so these are ours.
// The list is part of the API contract (the routes that name a role take it): it lives in src/contracts/principal.ts.
import { roles, type Role } from '../contracts/principal.ts';

export { roles, type Role };

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (roles as readonly string[]).includes(value);
}
