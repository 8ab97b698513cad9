// `SvcClient.open({ apiKey })`: resolves the gateway URL and the credential's tenant (GET /v1/auth/principal), then
// hands out the sub-APIs bound to that tenant. Tenant scope comes from the credential only (spec rules 1, 5, 6).
import { checkedAnswer } from './answers.ts';
import { Capabilities, Spend } from './capabilities.ts';
import { ClientCore, type AgentIdentity } from './core.ts';
import { attemptsMaxDefault, attemptsMaxLimit, requestTimeoutMsDefault, retryBudgetMsDefault } from './defaults.ts';
import { EngineHttpError, GatewayAuthError, SvcConfigurationError, SvcContractError } from './errors.ts';
import { Intents } from './intents.ts';
import { Events } from './events.ts';
import { Ledger } from './ledger.ts';
import { Policies } from './policies.ts';
import { Registry } from './registry.ts';
import { Review } from './review.ts';
import { defaultSleep, jsonObjectOf, Transport, type FetchFunction, type TransportResponse } from './transport.ts';
import type { Principal } from './types.ts';
import { resolveCredential, type CredentialSource } from './stored-login.ts';
import { resolveGatewayBaseUrl } from './url.ts';

export interface SvcClientOptions {
  /** A service-account API key (`svc_sk_…` / `svc_rk_…`); defaults to `SVC_API_KEY`, then to the credential
   * `svc login` stored (with the server it was obtained from; docs/sdk.md#credentials). */
  readonly apiKey?: string;
  /** Wins over `SVC_GATEWAY_URL`, then `SVC_GATEWAY_BASE_URL`, then the stored login's server when its credential is
   * used, then `http://127.0.0.1:8080`. No `/v1` in it. */
  readonly gatewayBaseUrl?: string;
  /** Where `SVC_GATEWAY_URL`, `SVC_GATEWAY_BASE_URL`, `SVC_API_KEY` and the stored login's folder (`XDG_CONFIG_HOME`,
   * `HOME`) are read; defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Open fails with `GatewayAuthError` when the credential's tenant is of another environment. */
  readonly expectedEnvironment?: 'sandbox' | 'live';
  /** Called on a 401; the request is retried once with the key it answers. */
  readonly refreshApiKey?: () => Promise<string> | string;
  /** Signs a recognition proof for every engine mutation (required by live tenants). */
  readonly agent?: AgentIdentity;
  /** Total attempts per request, the first included (default 3, at most 10). */
  readonly attemptsMax?: number;
  /** Per-attempt timeout (default 30 s). */
  readonly timeoutMs?: number;
  /** All attempts and backoff delays of one request together (default 60 s). */
  readonly retryBudgetMs?: number;
  /** A fetch implementation (default: the global fetch). */
  readonly fetch?: FetchFunction;
  /** Test hooks: how to wait, read the clock, and draw jitter. Defaults: setTimeout, Date.now, Math.random. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
  readonly random?: () => number;
}

function positiveInteger(value: number | undefined, fallback: number, name: string, max = Number.MAX_SAFE_INTEGER): number {
  const chosen = value ?? fallback;
  if (!Number.isSafeInteger(chosen) || chosen < 1 || chosen > max) throw new SvcConfigurationError(`${name} must be an integer from 1 to ${max}.`);
  return chosen;
}


export class SvcClient {
  /** The tenant realm every call is scoped to, from the credential (never from input). */
  readonly tenantId: string;
  /** `sandbox` or `live`. */
  readonly environment: string;
  /** The whole principal answer. */
  readonly principal: Principal;
  /** The resolved base URL, without a trailing slash. */
  readonly gatewayBaseUrl: string;
  /** Where the credential came from: the `apiKey` option, `SVC_API_KEY`, or the stored login. */
  readonly credentialSource: CredentialSource;
  readonly intents: Intents;
  readonly capabilities: Capabilities;
  readonly spend: Spend;
  readonly policies: Policies;
  readonly ledger: Ledger;
  /** The tenant's event log (docs/events.md). */
  readonly events: Events;
  readonly registry: Registry;
  /** The release gate and review holds (docs/release-gate.md). */
  readonly review: Review;

  private constructor(core: ClientCore, principal: Principal, credentialSource: CredentialSource) {
    this.credentialSource = credentialSource;
    this.tenantId = core.tenantId;
    this.environment = core.environment;
    this.principal = principal;
    this.gatewayBaseUrl = core.transport.baseUrl;
    this.policies = new Policies(core);
    this.intents = new Intents(core, this.policies);
    this.spend = new Spend(core);
    this.capabilities = new Capabilities(core, this.spend);
    this.ledger = new Ledger(core);
    this.events = new Events(core);
    this.registry = new Registry(core);
    this.review = new Review(core);
  }

  /** Opens a session: one `GET /v1/auth/principal` (retried per the rules). Refusals → `GatewayAuthError`. */
  static async open(options: SvcClientOptions = {}): Promise<SvcClient> {
    const now = options.now ?? Date.now;
    const sleep = options.sleep ?? defaultSleep;
    const credential = resolveCredential(options, (gatewayBaseUrl) => resolveGatewayBaseUrl({ gatewayBaseUrl, ...(options.env ? { env: options.env } : {}) }));
    const transport = new Transport({
      baseUrl: credential.gatewayBaseUrl,
      apiKey: credential.apiKey,
      refreshApiKey: options.refreshApiKey,
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      attemptsMax: positiveInteger(options.attemptsMax, attemptsMaxDefault, 'attemptsMax', attemptsMaxLimit),
      timeoutMs: positiveInteger(options.timeoutMs, requestTimeoutMsDefault, 'timeoutMs'),
      retryBudgetMs: positiveInteger(options.retryBudgetMs, retryBudgetMsDefault, 'retryBudgetMs'),
      sleep,
      now,
      random: options.random ?? Math.random,
    });
    const principal = await resolvePrincipal(transport);
    if (options.expectedEnvironment !== undefined && principal.environment !== options.expectedEnvironment) {
      throw new GatewayAuthError(`The credential is of a ${principal.environment} tenant, not ${options.expectedEnvironment}.`);
    }
    const core = new ClientCore({ transport, tenantId: principal.tenant_id, environment: principal.environment, agent: options.agent, now, sleep });
    return new SvcClient(core, principal, credential.source);
  }
}

/** The principal lookup is the one call without `x-tenant-id`: it is how the tenant is learned. */
async function resolvePrincipal(transport: Transport): Promise<Principal> {
  let response: TransportResponse;
  try {
    response = await transport.request({ method: 'GET', path: '/v1/auth/principal', retrySafe: true });
  } catch (error) {
    if (!(error instanceof EngineHttpError)) throw error;
    throw new GatewayAuthError(`The principal lookup was refused: HTTP ${error.status_code}${error.code ? ` ${error.code}` : ''}.`, error.status_code, error.body_text, error);
  }
  let body: Record<string, unknown>;
  try {
    body = jsonObjectOf(response);
  } catch (error) {
    throw new GatewayAuthError('The principal lookup answered something that is not a JSON object.', response.status, response.bodyText, error);
  }
  try {
    const principal = checkedAnswer('Principal', body, response);
    if (principal.tenant_id === '') throw new GatewayAuthError('The principal answer names no tenant.', response.status, response.bodyText);
    return principal;
  } catch (error) {
    if (!(error instanceof SvcContractError)) throw error;
    throw new GatewayAuthError(error.message, response.status, response.bodyText, error);
  }
}
