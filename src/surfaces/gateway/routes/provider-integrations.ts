// The provider integrations the public client names and this service does not run: Plaid bank accounts, Stripe ACH
// funding, Shopify payment sessions (docs/rails.md#provider-integrations). Each answers 422 `integration.not_supported`
// with the rails the service does run, after the usual credential and role checks, so a client learns why and what
// to use instead, rather than a 404 that reads as a wrong address.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { authenticatedBodyErrors, authenticatedErrors } from '../../../contracts/common.ts';
import type { Role } from '../../../credentials/roles.ts';
import { ServiceError } from '../../../errors/service-error.ts';
import { registeredRails } from '../../../rails/index.ts';

/** An id in a path of an integration we do not run: any short text, never looked up. */
const IntegrationId = Type.String({ minLength: 1, maxLength: 128 });

interface UnsupportedIntegration {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly provider: 'plaid' | 'stripe_ach' | 'shopify_payments';
  readonly summary: string;
}

/** The routes, one per call the client makes; the OpenAPI test knows they have no success answer. */
export const unsupportedIntegrations: readonly UnsupportedIntegration[] = [
  { method: 'GET', path: '/v1/admin/plaid/bank-accounts', provider: 'plaid', summary: 'Plaid bank accounts (not run here: 422)' },
  { method: 'GET', path: '/v1/admin/plaid/bank-accounts/:bank_account_id', provider: 'plaid', summary: 'A Plaid bank account (not run here: 422)' },
  { method: 'POST', path: '/v1/admin/settlement/stripe/ach/intents/:intent_id/fund', provider: 'stripe_ach', summary: 'Fund an intent by Stripe ACH from a Plaid bank (not run here: 422)' },
  { method: 'GET', path: '/v1/admin/shopify/payments/sessions/:session_id', provider: 'shopify_payments', summary: 'A Shopify payment session (not run here: 422)' },
];

/** Reading settlement setup is for admins, operators and auditors, funding for admins and operators, as on the
 * settlement configuration and fund routes. */
const rolesOf: Record<UnsupportedIntegration['method'], readonly Role[]> = { GET: ['admin', 'operator', 'auditor'], POST: ['admin', 'operator'] };

export async function providerIntegrationRoutes(app: FastifyInstance): Promise<void> {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  for (const integration of unsupportedIntegrations) {
    const parameterNames = [...integration.path.matchAll(/:([a-z_]+)/g)].map((match) => match[1]!);
    const params = parameterNames.length === 0 ? undefined : Type.Object(Object.fromEntries(parameterNames.map((name) => [name, IntegrationId])));
    const isPost = integration.method === 'POST';
    routes.route({
      method: integration.method,
      url: integration.path,
      // The client posts a small JSON body (or none); it is not read, so any object is accepted, or none at all.
      config: { access: { roles: rolesOf[integration.method] }, ...(isPost ? { bodyOptional: true } : {}) },
      schema: {
        summary: integration.summary,
        ...(params ? { params } : {}),
        ...(isPost ? { body: Type.Object({}, { additionalProperties: true }) } : {}),
        response: isPost ? authenticatedBodyErrors(422) : authenticatedErrors(422),
      },
      preValidation: async (request) => {
        if (isPost && request.body === undefined) request.body = {};
      },
      handler: async () => {
        throw new ServiceError('integration.not_supported', { details: { provider: integration.provider, supported_rails: registeredRails().map((rail) => rail.name) } });
      },
    });
  }
}
