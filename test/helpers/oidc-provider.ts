// A real OpenID Connect provider (`oidc-provider`) on loopback for the SSO tests: one confidential client, accounts
// the test adds, PKCE required, and a minimal interaction handler that signs in the account named by `login_hint`
// and grants the requested scopes, so the authorization step runs without forms. A test can also rewrite the ID
// token the token endpoint returns (re-signed with the provider's own key, or another), to check what we reject.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';

export interface TestAccount {
  readonly email?: string;
  readonly email_verified?: boolean;
}

export interface IdTokenRewrite {
  readonly payload: (payload: JWTPayload) => JWTPayload;
  /** Sign with a key the provider does not publish. */
  readonly foreignKey?: boolean;
}

export interface TestIdentityProvider {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUri: string;
  /** Adds an account whose `sub` is `accountId`. */
  addAccount(accountId: string, claims: TestAccount): void;
  /** Plays the person at the provider: follows the authorization request, signs `accountId` in, consents, and
   * answers the parameters the provider redirects to the redirect_uri with (`code`, `state`, `iss`). */
  authorize(authorizationUrl: string, accountId: string): Promise<URLSearchParams>;
  /** While set, every ID token from the token endpoint is rewritten. */
  rewriteIdToken: IdTokenRewrite | undefined;
  close(): Promise<void>;
}

export async function startTestIdentityProvider(options: { emailInIdToken: boolean }): Promise<TestIdentityProvider> {
  let handler: http.RequestListener = (_request, response) => response.writeHead(503).end();
  const server = http.createServer((request, response) => handler(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256');
  const signingJwk = { ...(await exportJWK(privateKey)), kid: 'test-idp-key', alg: 'RS256', use: 'sig' };
  const accounts = new Map<string, TestAccount>();
  const clientId = 'svc-test-client';
  const clientSecret = 'test-client-secret-0123456789abcdef';
  const redirectUri = 'https://console.example.test/sso/callback';

  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    }],
    jwks: { keys: [signingJwk] },
    cookies: { keys: ['test-cookie-signing-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    // false: the ID token carries the email claims (most providers); true: only userinfo does (oidc-provider's default).
    conformIdTokenClaims: !options.emailInIdToken,
    features: { devInteractions: { enabled: false } },
    // Stated rather than left to the provider's defaults, which announce themselves on stdout when first used.
    ttl: { AccessToken: 3600, AuthorizationCode: 60, Grant: 3600, IdToken: 3600, Interaction: 600, Session: 3600 },
    adapter: memoryAdapterFor(new Map()),
    pkce: { required: () => true },
    interactions: { url: (_context: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_context: unknown, accountId: string) => {
      const claims = accounts.get(accountId);
      return claims && { accountId, claims: () => ({ sub: accountId, ...claims }) };
    },
  });

  const testProvider: TestIdentityProvider = {
    issuer,
    clientId,
    clientSecret,
    redirectUri,
    rewriteIdToken: undefined,
    addAccount: (accountId, claims) => void accounts.set(accountId, claims),
    authorize: (authorizationUrl, accountId) => authorize(authorizationUrl, accountId, redirectUri),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  // Runs around the provider's own routes: after the token endpoint answered, rewrite its ID token if asked.
  provider.use(async (context, next) => {
    await next();
    const rewrite = testProvider.rewriteIdToken;
    const body = context.body as { id_token?: string } | undefined;
    if (!rewrite || context.path !== '/token' || context.status !== 200 || !body?.id_token) return;
    body.id_token = await new SignJWT(rewrite.payload(decodeJwt(body.id_token)))
      .setProtectedHeader({ alg: 'RS256', kid: signingJwk.kid, typ: 'JWT' })
      .sign(rewrite.foreignKey ? foreign.privateKey : privateKey);
  });

  const providerHandler = provider.callback();
  handler = (request, response) => {
    if (request.url?.startsWith('/interaction/')) {
      finishInteraction(provider, request, response).catch((error: Error) => response.writeHead(500).end(error.message));
      return;
    }
    providerHandler(request, response);
  };
  return testProvider;
}

/** What the provider stores (sessions, interactions, grants, codes, tokens), kept in a map this provider alone owns,
 * so that two providers in one test file share nothing. Only the lookups the authorization code flow makes. */
function memoryAdapterFor(records: Map<string, Record<string, unknown>>) {
  return class TestProviderAdapter {
    constructor(private readonly model: string) {}
    private key(id: string): string {
      return `${this.model}:${id}`;
    }
    async upsert(id: string, payload: Record<string, unknown>): Promise<void> {
      records.set(this.key(id), payload);
      if (typeof payload['uid'] === 'string') records.set(`${this.model}:uid:${payload['uid']}`, { id });
    }
    async find(id: string): Promise<Record<string, unknown> | undefined> {
      return records.get(this.key(id));
    }
    async findByUid(uid: string): Promise<Record<string, unknown> | undefined> {
      const pointer = records.get(`${this.model}:uid:${uid}`);
      return pointer && records.get(this.key(pointer['id'] as string));
    }
    async findByUserCode(): Promise<undefined> {
      return undefined;
    }
    async consume(id: string): Promise<void> {
      const record = records.get(this.key(id));
      if (record) record['consumed'] = Math.floor(Date.now() / 1000);
    }
    async destroy(id: string): Promise<void> {
      records.delete(this.key(id));
    }
    async revokeByGrantId(grantId: string): Promise<void> {
      for (const [key, record] of records) if (record['grantId'] === grantId) records.delete(key);
    }
  };
}

/** Signs in the account named by login_hint and grants what the client asked for, in one step. */
async function finishInteraction(provider: Provider, request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const interaction = await provider.interactionDetails(request, response);
  const accountId = interaction.params.login_hint;
  const clientId = interaction.params.client_id;
  if (!accountId || !clientId) throw new Error('the test authorization request needs login_hint');
  const grant = new provider.Grant({ accountId, clientId });
  grant.addOIDCScope(interaction.params.scope ?? 'openid');
  const grantId = await grant.save();
  await provider.interactionFinished(request, response, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
}

/** Follows the provider's redirects like a browser (cookies kept, every cookie sent back) until it redirects to the
 * client's redirect_uri, whose query it answers. */
async function authorize(authorizationUrl: string, accountId: string, redirectUri: string): Promise<URLSearchParams> {
  const cookies = new Map<string, string>();
  let next = new URL(authorizationUrl);
  next.searchParams.set('login_hint', accountId);
  for (let hop = 0; hop < 10; hop += 1) {
    const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(next, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const setCookie of response.headers.getSetCookie()) {
      const pair = setCookie.split(';', 1)[0]!;
      const equals = pair.indexOf('=');
      cookies.set(pair.slice(0, equals), pair.slice(equals + 1));
    }
    const location = response.headers.get('location');
    if (!location) throw new Error(`the provider stopped at ${response.status}: ${await response.text()}`);
    const target = new URL(location, next);
    if (`${target.origin}${target.pathname}` === redirectUri) return target.searchParams;
    next = target;
  }
  throw new Error('too many redirects at the provider');
}
