// What a console page handler works with: the signed-in viewer, the API as that viewer, and the route contracts
// that say which controls to show. Visibility follows the API's own access table (app.routeContracts), so an
// auditor sees no write control because the routes say so, and the API refuses the call anyway.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Role } from '../../credentials/roles.ts';
// For its declaration of `app.routeContracts`.
import '../mcp/route-contracts.ts';
import { callApi, type ApiAnswer, type ApiCall, type ApiError } from './api.ts';

export interface Viewer {
  readonly tenantId: string;
  readonly environment: 'sandbox' | 'live';
  readonly role: Role;
  readonly subject: string;
}

/** Thrown when the API no longer accepts the session: the page sends the browser back to sign-in. */
export class SessionEnded extends Error {
  constructor(readonly error: ApiError) {
    super(`session ended: ${error.code}`);
  }
}

/** Thrown when what the URL names does not exist for this tenant (another tenant's id included): a 404 page. */
export class PageNotFound extends Error {
  constructor(readonly error: ApiError) {
    super(`not found: ${error.code}`);
  }
}

const sessionEndingCodes = new Set(['auth.credential_expired', 'auth.credential_invalid', 'auth.credential_revoked', 'auth.credential_missing']);

export class ConsoleContext {
  constructor(
    readonly app: FastifyInstance,
    readonly request: FastifyRequest,
    readonly reply: FastifyReply,
    readonly viewer: Viewer,
    readonly csrfToken: string,
    private readonly sessionToken: string,
  ) {}

  /** Calls the API as the viewer; a refused session ends the page (back to sign-in). */
  async api<T = Record<string, unknown>>(call: ApiCall): Promise<ApiAnswer<T>> {
    const answer = await callApi<T>(this.app, this.request, this.sessionToken, call);
    if (answer.status === 401 && answer.error && sessionEndingCodes.has(answer.error.code)) throw new SessionEnded(answer.error);
    return answer;
  }

  /** Like api(), for reads a page cannot do without: a 404 becomes the 404 page, another error is thrown. */
  async read<T = Record<string, unknown>>(url: string): Promise<T> {
    const answer = await this.api<T>({ method: 'GET', url });
    if (answer.error && answer.status === 404) throw new PageNotFound(answer.error);
    if (answer.error) throw new ApiFailure(answer.error, answer.status);
    return answer.body;
  }

  /** An action on what the URL names: the API's 404 (another tenant's id included) becomes the 404 page. */
  async act<T = Record<string, unknown>>(call: ApiCall): Promise<ApiAnswer<T>> {
    const answer = await this.api<T>(call);
    if (answer.error && answer.status === 404) throw new PageNotFound(answer.error);
    return answer;
  }

  /** Whether the viewer's role may call the route (`POST /v1/admin/api-keys`), by the route's declared access. */
  may(route: string): boolean {
    const contract = this.app.routeContracts.get(route);
    if (!contract) return false;
    const access = contract.access;
    return 'roles' in access && access.roles.includes(this.viewer.role);
  }
}

/** An API error a page could not work around; shown as an error page with the catalogue's words. */
export class ApiFailure extends Error {
  constructor(
    readonly error: ApiError,
    readonly status: number,
  ) {
    super(`api error: ${error.code}`);
  }
}

export const sessionEnding = (error: ApiError | undefined): boolean => error !== undefined && sessionEndingCodes.has(error.code);
