// People who sign in: one identity per email, a membership (with its role) per tenant. `svc user create` adds a
// person to a tenant, creating the identity on first use, so one person can belong to several tenants.
import { randomBytes } from 'node:crypto';
import { emailLengthMin, emailPatternSource } from '../contracts/sign-in.ts';
import type { Role } from '../credentials/roles.ts';
import { findTenant } from '../db/tenant-repository.ts';
import { ensureUser, insertMembership } from '../db/user-repository.ts';
import { ServiceError } from '../errors/service-error.ts';
import { emailLengthMax } from '../limits.ts';
import { isUniqueViolation, type Database } from '../infra/database.ts';

// The email rule (a local part, "@", a domain; no whitespace or control characters) is the login/start contract's
// (src/contracts/sign-in.ts), and the SQL CHECK of `users.email`.
export { emailLengthMin, emailPatternSource };
const emailPattern = new RegExp(emailPatternSource, 'u');

/** Emails are compared lowercased: people do not expect `Ann@Example.com` and `ann@example.com` to differ. Check a
 * normalized email with isValidEmail before it is used: lowercasing can lengthen it ("İ" becomes two characters). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The contract's rule and the `users.email` CHECK, on a normalized email; lengths in code points, as both count. */
export function isValidEmail(email: string): boolean {
  const length = [...email].length;
  return length >= emailLengthMin && length <= emailLengthMax && emailPattern.test(email);
}

export interface CreatedMembership {
  readonly userId: string;
  readonly email: string;
  readonly tenantId: string;
  readonly role: Role;
}

export function mintUserId(): string {
  return `usr_${randomBytes(16).toString('hex')}`;
}

/** Adds the person with this email to the tenant with a role, creating their identity if they have none yet. */
export async function createUser(database: Database, request: { tenantId: string; email: string; role: Role }): Promise<CreatedMembership> {
  const email = normalizeEmail(request.email);
  if (!isValidEmail(email)) throw new ServiceError('user.email_invalid');
  try {
    return await database.system(async (tx) => {
      const tenant = await findTenant(tx, request.tenantId);
      if (!tenant) throw new ServiceError('tenant.not_found', { details: { tenant_id: request.tenantId } });
      const user = await ensureUser(tx, mintUserId(), email);
      await insertMembership(tx, tenant.tenantId, user.userId, request.role);
      return { userId: user.userId, email: user.email, tenantId: tenant.tenantId, role: request.role };
    });
  } catch (error) {
    if (isUniqueViolation(error, 'tenant_memberships_pkey')) {
      throw new ServiceError('user.already_member', { details: { tenant_id: request.tenantId } });
    }
    throw error;
  }
}
