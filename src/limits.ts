// Every limit of the service as a named constant, with the reason beside it.
// The same constants feed the validators, the JSON schemas, the SQL CHECKs (by hand, see migrations/) and docs/.

// ---- Release rules (predicate DSL). The first four are the spec's "Limits" table. ----
/** Deepest nesting of `and` / `or` / `not` in a clause tree (spec). */
export const predicateDepthMax = 24;
/** AST nodes visited over a whole document, at validation and at evaluation (spec). */
export const predicateFuelMax = 256;
/** Segments in the `path` of `eq`, `completion`, `lte`, `budget_cap` (spec). */
export const predicatePathSegmentsMax = 16;
/** Clauses in one `and` / `or` (spec). */
export const predicateClausesMax = 32;
/** Byte size of the canonical (sorted-key, compact) JSON of a predicate document (docs/predicates.md#limits). */
export const predicateDocumentBytesMax = 16 * 1024;
/** Length of one path segment or `field` name; keys longer than this cannot be addressed. */
export const predicateKeyLengthMax = 256;

// ---- HTTP ----
/** Largest request body accepted by any route. Evidence is the largest body we take. */
export const requestBodyBytesMax = 1024 * 1024;
/** A caller-supplied `x-request-id` longer than this is replaced by a generated one. */
export const requestIdLengthMax = 128;
/** `idempotency-key` header length (spec: 1 to 256 characters). */
export const idempotencyKeyLengthMin = 1;
export const idempotencyKeyLengthMax = 256;
/** Default and largest page of any list route. */
export const pageSizeDefault = 50;
export const pageSizeMax = 200;
/** Longest request target (path and query) accepted; longer is 414. No route needs more than a few hundred
 * characters, and Node refuses request lines past its 16 KiB header limit anyway (431). */
export const requestUrlLengthMax = 4096;
/** Longest single path parameter, as sent (percent-encoded); the router answers 414 past it. Ids are under 40
 * characters; an operator DID (`GET /reputation/{operator_did}`, at most didLengthMax) may arrive with every
 * character percent-encoded, three times as long. */
export const routeParameterLengthMax = 768;
/** Deepest nesting of arrays and objects in a request body. Values inside a body (evidence, schemas, predicates)
 * keep their own check against `jsonNestingDepthMax` and their own error code a few levels down; this bound only
 * stops a pathological body (JSON.parse takes a million levels) before any recursive code sees it. */
export const requestJsonNestingDepthMax = 128;
/** Characters of the JSON pointer a refused input echoes in `details.path`; a longer one (under a key of 100 KB)
 * is cut and ends with "…", so an answer stays small whatever the body held. */
export const inputPointerLengthMax = 1024;
/** Server-side bounds on how long a request may wait for its headers, its body and its answer. */
export const requestTimeoutMs = 30_000;
/** How much later than the request timeout Node's own request and idle timeouts fire: the app answers a body that
 * has not arrived in time with 408 in the envelope (src/plugins/request-framing.ts); Node's timers only back that
 * up, and bound slow headers, before which there is no request to answer. */
export const nodeTimeoutGraceMs = 2_000;
/** How often Node checks its request and headers timeouts; at its default (30 s) a request may run for up to twice
 * its timeout before it is cut. */
export const nodeTimeoutCheckIntervalMs = 1_000;
/** How long shutdown waits for in-flight requests before exiting anyway. */
export const shutdownGraceMs = 10_000;

// ---- Tenants and credentials (docs/architecture.md#credentials) ----
/** Tenant realm slug length; the pattern is `tenantIdPattern`. */
export const tenantIdLengthMax = 64;
export const tenantIdPattern = /^[a-z0-9][a-z0-9._-]*$/;
/** Display name of an API key. */
export const apiKeyNameLengthMax = 128;
/** Scopes on one restricted key, and the length of each. */
export const apiKeyScopesMax = 32;
export const apiKeyScopeLengthMax = 64;
/** How often `last_used_at` of a key is written at most: the field is coarse on purpose (no write per request). */
export const apiKeyLastUsedWriteIntervalMs = 60_000;
/** How long a verified key stays in a process's cache. Revocation is also pushed to every replica at once
 * (Postgres NOTIFY); this bound holds even if a notification is lost. */
export const apiKeyCacheTtlMs = 5_000;
/** Entries in the per-process credential cache. */
export const apiKeyCacheEntriesMax = 10_000;
/** How long a rotated key's previous secret keeps working by default, so that every process using the key can take
 * the new one before the old stops (a deploy, a secret store's refresh). A rotation may ask for less, down to 0. */
export const apiKeyRotationOverlapSecondsDefault = 24 * 60 * 60;
/** The longest overlap a rotation may ask for: a leaked key is rotated to end it, not to keep it a week more. */
export const apiKeyRotationOverlapSecondsMax = 7 * 24 * 60 * 60;
assertLimit(apiKeyRotationOverlapSecondsDefault <= apiKeyRotationOverlapSecondsMax, 'the default overlap must be one a rotation may ask for');

// ---- Database ----
/** Largest policy version number: the column is a Postgres integer, so a larger number can name no version. */
export const policyVersionSeqMax = 2_147_483_647;
/** Connections in one process's pool. */
export const databasePoolSizeMax = 20;
/** A statement running longer than this is cancelled by Postgres. */
export const databaseStatementTimeoutMs = 15_000;
/** Distinct statement texts one process prepares by name (each connection keeps its own plan of each); texts
 * seen after these run unnamed. */
export const databasePreparedStatementsMax = 256;
/** How long start-up (and the CLI) waits for the first connection to DATABASE_URL before saying it is unreachable:
 * a host that drops packets would otherwise hang the start with no message at all. */
export const databaseConnectTimeoutMs = 10_000;
/** How long a request waits for a pooled connection (a free one, or a new one being opened) before it is answered
 * 503 with Retry-After: a database that drops packets during a failover would otherwise hold every request until
 * its own timeout, and a pool kept busy that long is better told to come back. */
export const databasePoolConnectTimeoutMs = 10_000;
/** The revocation listener's connection is checked this often (a `SELECT 1`), so that one lost without a word (a
 * failover that drops packets) is noticed and reopened: the revocations it missed are then honoured at once. */
export const revocationListenerCheckIntervalMs = 10_000;
/** Longest wait between two attempts to reopen the revocation listener's connection (the first is immediate, then
 * 100 ms, doubling): revocations reach this process only through the cache TTL meanwhile. */
export const revocationListenerReconnectDelayMaxMs = 2_000;

// Relationships between limits, asserted once at load: a violated one is a programmer error.
function assertLimit(condition: boolean, message: string): void {
  if (!condition) throw new Error(`limits.ts: ${message}`);
}
assertLimit(pageSizeDefault <= pageSizeMax, 'the default page must fit in the largest page');
assertLimit(predicateClausesMax < predicateFuelMax, 'a full and/or must be visitable within the fuel');
assertLimit(predicateDepthMax < predicateFuelMax, 'the deepest valid tree must be visitable within the fuel');
assertLimit(predicateDocumentBytesMax < requestBodyBytesMax, 'a valid predicate must fit in a request body');
assertLimit(databaseStatementTimeoutMs < requestTimeoutMs, 'a statement must time out before its request does');
assertLimit(databasePoolConnectTimeoutMs < requestTimeoutMs, 'a request must be answered 503 before its own timeout when no connection comes');
assertLimit(revocationListenerReconnectDelayMaxMs < apiKeyCacheTtlMs, 'a lost listener must be back before the cache bound would have to take over');

// ---- JSON values taken from callers (evidence, schemas, budgets, predicates) ----
/** Nesting of arrays/objects in any JSON value we canonicalize, digest or evaluate. Bounds recursion so a
 * pathological body is a clear 4xx, never a stack overflow. */
export const jsonNestingDepthMax = 64;

// ---- Signing ----
/** Longest RFC 3339 text we parse: the longest sensible form is 35 characters; the rest only bounds digit runs. */
export const rfc3339TextLengthMax = 64;
/** Parsed Ed25519 public keys kept per process; a key object is cheap to rebuild, so this only bounds memory. */
export const ed25519PublicKeyCacheEntriesMax = 1024;
/** The `x-svc-agent-recognition-proof` header, as sent (base64url). A real proof is about 1.2 KB. */
export const recognitionProofHeaderBytesMax = 8 * 1024;
/** Longest `expires_at - issued_at` of a recognition proof (docs/signing.md#recognition-proofs: at most 10 minutes). */
export const recognitionProofWindowMsMax = 10 * 60_000;
/** How far in the future `issued_at` may lie: clocks of clients and replicas drift; a proof from later is refused. */
export const recognitionClockSkewMs = 30_000;
/** Characters of a recognition-proof nonce (docs/signing.md#recognition-proofs). */
export const recognitionNonceLengthMax = 256;
/** Characters of a registered key's subject (a DID or an agent key id); the same bound is a CHECK in
 * migrations/0002_key_registry.sql. */
export const registeredKeySubjectLengthMax = 256;

// ---- Transaction engine ----
/** How long a stored idempotent answer is kept at least (spec: keys kept 24 h at least; docs/engine.md#idempotency). */
export const idempotencyRecordRetentionMs = 48 * 60 * 60_000;
/** Tools an intent may allow, and the length of each name. */
export const allowedToolsMax = 64;
export const allowedToolLengthMax = 128;
/** Length of DIDs and other free-text identifiers in intents. */
export const didLengthMax = 256;
/** Artifact hashes on one evidence submission. */
export const evidenceArtifactsMax = 256;
/** Compiled evidence-schema validators kept per process (keyed by the schema's digest). */
export const evidenceSchemaCacheEntriesMax = 512;

// ---- Funding rails (docs/rails.md) ----
/** How long a fund request's claim on its funding attempt stands while its rail call runs with no lock held
 * (docs/engine.md "Funding in two phases"). Sooner, a second request for that intent is told the first is in
 * progress; later, the first is presumed dead (its process crashed between the phases) and a retry with the same
 * credential takes the claim over. Longer than a rail call takes; short enough that a client's retry after a
 * crash completes within seconds. Correctness does not rest on it: the rail answers the same credential the same
 * way, and the outcome is recorded once, under the intent's row lock. */
export const fundingClaimLeaseMs = 3_000;
/** Deadline of one HTTP call to a live rail's facilitator or processor (AppOptions.railCallTimeoutMs overrides it).
 * A call past it is abandoned: a settle that may have happened is then resolved by asking the rail again. */
export const railCallTimeoutMsDefault = 10_000;
/** `Retry-After` of a 503 `rail.unavailable`: the facilitator or processor could not be reached or answered 5xx. */
export const railRetryAfterSecondsDefault = 5;
/** `Retry-After` of a 503 `internal.unavailable`: the database could not be reached or had no connection to give
 * (a restart, a failover, `max_connections` reached), the rate-limit counters could not be reached, or the server is
 * shutting down. Short, since these pass in seconds (a load balancer sends the retry to another replica). */
export const dependencyUnavailableRetryAfterSeconds = 1;
/** `Retry-After` of a 503 that only an operator can end (`settlement_config.secrets_key_missing`): a retry is
 * pointless before someone changes the deployment, so clients are asked to wait long. */
export const operatorActionRetryAfterSeconds = 60;
/** Characters of a live rail's endpoint URL (`x402_facilitator_url`, `mpp_processor_url`). */
export const railEndpointUrlLengthMax = 2048;
/** Characters of a live rail's secret (`x402_facilitator_api_key`, `mpp_processor_secret_key`). */
export const railSecretLengthMax = 1024;
/** Rail instructions (payouts, refunds) and unfinished funding claims handled per maintenance pass. */
export const railSweepBatchMax = 50;
/** Tries of one rail instruction before it is marked failed and left to the operator. */
export const railInstructionAttemptsMax = 20;
/** How long an MPP `Payment` challenge may be answered (its `expires`); long enough for a person to approve. */
export const mppChallengeLifetimeMs = 15 * 60_000;
/** x402 `maxTimeoutSeconds`: how long the payer's authorization may take to settle. */
export const x402MaxTimeoutSeconds = 300;
/** An EIP-3009 authorization's `validBefore` must leave at least this long to settle in: a block's time, the margin
 * the x402 reference facilitator requires before it will submit one. */
export const x402ValidBeforeMarginSeconds = 6;
/** x402 `auth-capture`: how long after the intent's deadline the hold's capture deadline falls (docs/decisions.md,
 * "The capture deadline's margin"). A release decided just before the deadline is captured by the sweeper after it;
 * a day covers its retries (30 s doubling), a facilitator down for hours and clock skew, and is short enough that a
 * payer whose intent lapsed is not kept from reclaiming the hold for long. */
export const x402CaptureDeadlineMarginSeconds = 24 * 60 * 60;
/** x402 `auth-capture`: the refund deadline, this long after the capture deadline (captured funds may be refunded
 * through the facilitator until then). */
export const x402RefundWindowSeconds = 30 * 24 * 60 * 60;
/** How long a sweeper's claim on a rail instruction stands before another pass may take it over (the process that
 * claimed it died between the rail's answer and its commit): longer than one rail call's deadline. */
export const railInstructionClaimLeaseMs = 15_000;
/** A rail credential header (`payment-signature`, `x-svc-payment-authorization`) as sent. Real ones are ~1–2 KB. */
export const paymentCredentialHeaderBytesMax = 16 * 1024;
/** Rails in one settlement configuration: each known rail at most once. */
export const settlementRailsMax = 8;
/** Length of an MPP profile id and of a linked processor destination (e.g. a connected account id). */
export const mppProfileIdLengthMax = 128;
export const processorDestinationLengthMax = 255;
/** The text an EVM address field of a settlement configuration admits before its own check answers: 0x and 40 hex
 * digits fit, and a near miss is answered with the field's own code rather than a schema error. */
export const evmAddressTextLengthMax = 64;
assertLimit(paymentCredentialHeaderBytesMax < requestBodyBytesMax, 'a credential header must be smaller than a body');
assertLimit(requestJsonNestingDepthMax > jsonNestingDepthMax + 8, 'a value at its own nesting limit must fit inside a body');

// ---- Ledger ----
/** Page of `GET /harbor/ledger/v1/events` (docs/ledger.md#routes: limit 1..256, default 64). */
export const ledgerEventsPageDefault = 64;
export const ledgerEventsPageMax = 256;
/** Rows (and intents) `svc ledger verify` reads per query, so its memory does not grow with the ledger's length. */
export const ledgerVerifyBatchRows = 1000;
/** Problems the verifier lists one by one; past this it only counts them (a broken ledger can break every row). */
export const ledgerVerifyProblemsMax = 1000;
/** Length of an account name (SQL CHECK in migrations/0005_ledger.sql): a DID with its `payee:` / `:payable` frame. */
export const ledgerAccountLengthMax = 512;
/** Entries in one ledger transaction: the engine posts two; more would be a programmer error. */
export const ledgerTransactionEntriesMax = 16;
assertLimit(ledgerEventsPageDefault <= ledgerEventsPageMax, 'the default ledger events page must fit in the largest');

// ---- Release-rule traces and templates ----
// These bound a trace, not a request: a trace step costs at most about traceObservedNodesMax ×
// traceObservedStringLengthMax characters of observed evidence, whatever the evidence holds.
/** JSON values (each array element, object member and scalar counts one) copied into a trace for one observed value. */
export const traceObservedNodesMax = 16;
/** UTF-16 code units of one string (or object key) copied verbatim into a trace. */
export const traceObservedStringLengthMax = 128;
/** Longest string parameter of a managed template (an expected status or event type); the document byte limit
 * still applies to the materialized rule. */
export const templateStringParameterLengthMax = 256;

// ---- Maintenance ----
/** How often a replica tries to run maintenance (expired intents, old idempotency records, old nonces). */
export const maintenanceIntervalMs = 30_000;
/** How soon after it starts a replica tries its first pass: once a funding claim orphaned by a crash just before the
 * start has outlived its lease (fundingClaimLeaseMs), with a second's margin, so that a restart resolves it within
 * seconds rather than after a whole interval. */
export const maintenanceFirstPassDelayMs = fundingClaimLeaseMs + 1_000;
/** Expired intents refunded per maintenance pass; the rest wait for the next pass. */
export const maintenanceIntentsPerPassMax = 200;

// ---- Capability tokens ----
/** Longest life of a capability token; it also ends at the intent's deadline, whichever comes first. */
export const capabilityTokenLifetimeMaxSeconds = 24 * 60 * 60;

// ---- Capabilities and sandbox ----
/** A capability token as presented to /verify. Ours are ~0.5 KB, but the token carries the intent's allowed tools
 * (up to allowedToolsMax × allowedToolLengthMax characters), base64url-encoded. */
export const capabilityTokenLengthMax = 16 * 1024;
/** Cents one /verify may ask to reserve: amounts are JavaScript safe integers end to end. */
export const requestedSpendCentsMax = Number.MAX_SAFE_INTEGER;
/** Cents a sandbox guardrail bootstrap may fund: the simulator moves no money, so a value past a million units
 * is a mistake, not a test. */
export const sandboxRequestedSpendCentsMax = 100_000_000;
/** Characters of an `operation` and of each optional text field of /verify (vendor_id, tool_call_id, …). */
export const verifyTextFieldLengthMax = 256;
/** Hex characters of `config_hash_hex` and `prompt_hash_hex` on /verify (a 512-bit digest at most). */
export const verifyHashHexLengthMax = 128;
/** Reason codes in one /verify answer; a deny carries its code, so this only bounds future additions. */
export const verifyReasonCodesMax = 8;
/** Bytes of the canonical JSON of a sandbox guardrail's `metadata` object (bootstrap and evidence). */
export const sandboxMetadataBytesMax = 16 * 1024;
/** How long a sandbox guardrail intent stays funded before the sweeper refunds it. */
export const sandboxIntentLifetimeMs = 60 * 60_000;
assertLimit(capabilityTokenLengthMax > allowedToolsMax * allowedToolLengthMax, 'a token must fit every allowed tool');
assertLimit(verifyTextFieldLengthMax >= allowedToolLengthMax, 'every allowed tool must be presentable as an operation');
assertLimit(sandboxRequestedSpendCentsMax <= requestedSpendCentsMax, 'a sandbox intent must be verifiable in full');
assertLimit(sandboxMetadataBytesMax < requestBodyBytesMax, 'sandbox metadata must fit in a request body');
assertLimit(sandboxIntentLifetimeMs / 1000 <= capabilityTokenLifetimeMaxSeconds, 'a sandbox token must live as long as its intent');

// ---- Sign-in ----
/** Digits of a one-time sign-in code (docs/sign-in.md#codes). With signInAttemptsMax guesses, a blind guess wins 5
 * in a million. */
export const signInCodeDigits = 6;
/** How long a sign-in code can be used after login/start (docs/sign-in.md#codes: 10 minutes). */
export const signInChallengeLifetimeMs = 10 * 60_000;
/** Wrong codes a challenge takes before it locks; the next attempt fails even with the right code. */
export const signInAttemptsMax = 5;
/** An email address: RFC 5321 caps a forward path at 256 octets including its brackets, so 254 for the address. */
export const emailLengthMax = 254;
/** Tenants listed in a 409 `auth.tenant_required`; a person in more tenants than this names one explicitly. */
export const signInTenantChoicesMax = 100;
/** Life of a session JWT (docs/sign-in.md#session-tokens: 15 minutes); a token claiming a longer life is refused. */
export const sessionTokenLifetimeSeconds = 15 * 60;
/** Characters of a bearer that is not an API key: our session tokens are ~0.5 KB; anything far longer is refused unread. */
export const sessionTokenLengthMax = 4096;
/** How long a session's membership (its tenant and role) stays in a process's cache before it is read again, so a
 * removed member or a changed role stops working within this bound. */
export const sessionMembershipCacheTtlMs = 5_000;
/** Entries in the per-process session membership cache. */
export const sessionMembershipCacheEntriesMax = 10_000;
/** Connection, greeting and socket timeouts of one SMTP delivery: a slow relay must not hold resources for long. */
export const mailSendTimeoutMs = 10_000;
assertLimit(signInAttemptsMax / 10 ** signInCodeDigits <= 1e-5, 'a blind guess must succeed at most once in 100 000 challenges');
assertLimit(sessionMembershipCacheTtlMs < sessionTokenLifetimeSeconds * 1000, 'a membership change must outpace the token');
assertLimit(mailSendTimeoutMs < signInChallengeLifetimeMs, 'a code must be deliverable within its lifetime');

// ---- Single sign-on ----
/** How long an sso/start can be answered by its callback (like a sign-in code: 10 minutes), judged by the
 * database clock. A person at the identity provider's login page longer than this starts again. */
export const ssoStateLifetimeMs = 10 * 60_000;
/** Allowed email domains of one tenant's SSO configuration (the SQL CHECK of `sso_configs` repeats it). */
export const ssoAllowedEmailDomainsMax = 50;
/** A DNS name (RFC 1035: 253 characters in text form). */
export const ssoEmailDomainLengthMax = 253;
/** Characters of an issuer or redirect URI (the SQL CHECK of `sso_configs` repeats it). */
export const ssoUrlLengthMax = 2048;
/** Characters of an OIDC client id and client secret (the SQL CHECK of `sso_configs` repeats them). */
export const ssoClientIdLengthMax = 255;
export const ssoClientSecretLengthMax = 1024;
/** Characters of the authorization code a callback may present; real codes are far shorter. */
export const ssoAuthorizationCodeLengthMax = 2048;
/** How long a discovered issuer's metadata is reused from process memory; an optimization only. */
export const ssoDiscoveryCacheTtlMs = 5 * 60_000;
/** Issuers whose metadata one process keeps. */
export const ssoDiscoveryCacheEntriesMax = 1_000;
/** Seconds one request to an identity provider (discovery, token, JWKS, userinfo) may take. */
export const ssoProviderTimeoutSeconds = 10;
assertLimit(ssoProviderTimeoutSeconds * 1000 < ssoStateLifetimeMs, 'a callback must be answerable within the state lifetime');
assertLimit(ssoAllowedEmailDomainsMax * (ssoEmailDomainLengthMax + 4) < requestBodyBytesMax, 'a full domain list must fit in a request body');

// ---- Audit exports ----
/** How long an export's bundle is kept when the request names no retention_hours (docs/audit-exports.md#routes). */
export const auditExportRetentionHoursDefault = 168;
/** The longest retention a request may ask for (the SQL CHECK of `audit_exports` repeats it). */
export const auditExportRetentionHoursMax = 720;
/** Life of a download JWT (aud svc-audit-export-download): short, like a session; ask GET ?issue_download=1 again. */
export const auditExportDownloadTokenLifetimeSeconds = 15 * 60;
/** Largest ZIP one export may be; it is kept in a bytea row and built in memory. Narrow the filter beyond it. */
export const auditExportBundleBytesMax = 32 * 1024 * 1024;
/** Intents and ledger rows one bundle may carry (read in one snapshot, held in memory while building). */
export const auditExportIntentsMax = 10_000;
export const auditExportLedgerRowsMax = 200_000;
/** Characters of a download token read at all; ours are ~0.5 KB. */
export const auditExportDownloadTokenLengthMax = 4096;
assertLimit(auditExportRetentionHoursDefault <= auditExportRetentionHoursMax, 'the default retention must be allowed');
assertLimit(auditExportDownloadTokenLifetimeSeconds * 1000 < auditExportRetentionHoursDefault * 3_600_000, 'a token must not outlive a default export');

// ---- MCP endpoint ----
/** JSON-RPC messages one `POST /mcp` may batch. Hosts send one at a time; each tool call in a batch is a route call,
 * so the cap bounds the work one request can start (and the rate limit still counts each route call). */
export const mcpBatchMessagesMax = 16;
/** Characters of a JSON-RPC method name or string request id; MCP's longest method is about 40. */
export const mcpMethodLengthMax = 128;

// ---- Device login (RFC 8628, docs/sign-in.md#device-login) ----
/** How long a device code and its user code can be approved and redeemed: the RFC's example, like a sign-in code. */
export const deviceCodeLifetimeMs = 10 * 60_000;
/** Seconds a device waits between token polls at first (the RFC's default of 5). */
export const devicePollIntervalSeconds = 5;
/** Seconds added to a device's interval by each slow_down (RFC 8628 section 3.5 says 5). */
export const deviceSlowDownStepSeconds = 5;
/** The interval never grows past this (the SQL CHECK of `device_authorizations` repeats it). */
export const devicePollIntervalMaxSeconds = 60;
/** Letters of a user code, shown as XXXX-XXXX. 19 letters ^ 8 ≈ 1.7e10 codes: with the lookup limits below, a
 * guesser trying all day long hits one of a thousand live codes with a chance of about 1 in 1 200. */
export const deviceUserCodeLength = 8;
/** Characters of the client_name a device may give (the SQL CHECK repeats it). */
export const deviceClientNameLengthMax = 64;
/** User-code lookups (read or decide) one person may make per window. A person approving a device makes two; more
 * than this in a minute is guessing. */
export const deviceUserCodeLookupsPerWindowMax = 10;
/** The same per client address: higher, since several people may share one address (an office behind NAT), and
 * it bounds a guesser who signs in with many accounts from one place. */
export const deviceUserCodeLookupsPerAddressPerWindowMax = 60;
export const deviceUserCodeLookupWindowSeconds = 60;
assertLimit(deviceUserCodeLookupsPerWindowMax <= deviceUserCodeLookupsPerAddressPerWindowMax, 'one person must fit in an address budget');
assertLimit(devicePollIntervalSeconds < devicePollIntervalMaxSeconds, 'a device must be able to slow down');
assertLimit(devicePollIntervalMaxSeconds * 1000 < deviceCodeLifetimeMs, 'a slowed-down device must still get a poll in');
assertLimit(
  (deviceUserCodeLookupsPerWindowMax * (86_400 / deviceUserCodeLookupWindowSeconds) * 1_000) / 19 ** deviceUserCodeLength < 1e-3,
  'a day of guessing against a thousand live codes must succeed less than once in a thousand',
);

// ---- Transparency log (docs/protocol.md#transparency-log) ----
/** How often a replica runs the tree-head pass. A tenant's new leaves are under a signed head within about this
 * long (plus the pass itself); the promise is at most 5 s, so a pass may run late once and still keep it. */
export const treeHeadIntervalMs = 2_000;
/** Tenants given a new head per pass; the rest wait for the next pass (a few milliseconds each). */
export const treeHeadTenantsPerPassMax = 500;
/** Leaves one tenant's head may add in one pass: bounds the pass's reads and hashing; a head past a burst covers
 * this many and the next pass continues. */
export const treeHeadLeavesPerPassMax = 20_000;
/** Characters of a log leaf's artifact id (a receipt id or a mandate digest; the SQL CHECK repeats it). */
export const logArtifactIdLengthMax = 128;
/** Log leaves one audit export carries (with their proofs); past it, create answers `audit_export.too_large`. */
export const auditExportLogLeavesMax = 50_000;
assertLimit(treeHeadIntervalMs <= 5_000, 'tree heads are promised at most 5 s behind');

// ---- Standing (docs/standing.md) ----
/** Operators one signed portfolio snapshot carries: the whole snapshot is built, signed and sent in one answer (a few
 * hundred bytes per operator, so about 10 MiB at most); a tenant past it gets `standing.export_too_large`. */
export const standingExportOperatorsMax = 20_000;
/** Operators one portfolio summary aggregates: it reads one row per operator (a DID and three counts, so about 30 MiB
 * at most) to score each; a tenant past it gets `standing.summary_too_large`. */
export const standingSummaryOperatorsMax = 100_000;
/** How long a process keeps a signed operator receipt to answer repeated reads without a transaction and a signature.
 * A settlement in this process invalidates its operator's receipts at once (standing-service.ts); another replica
 * may answer a receipt up to this old, and every receipt names its checkpoint (docs/standing.md#caching). */
export const standingReceiptCacheTtlMs = 1_000;
/** Receipts kept per process (about 2 KiB each, so under 10 MiB); the least recently read go first. */
export const standingReceiptCacheEntriesMax = 4_096;
/** Operators whose last invalidation a process remembers; past it, receipts read before the oldest forgotten one are
 * no longer stored. */
export const standingReceiptInvalidationsMax = 4_096;
/** Attempts of `svc standing rebuild` when settlements committing meanwhile conflict with its snapshot, and the
 * longest pause before the next one (times the attempt number, randomized). */
export const standingRebuildAttemptsMax = 10;
export const standingRebuildRetryPauseMs = 100;
/** Statement timeout inside a rebuild: it reads every settled intent of the tenant in one statement (a few seconds
 * per million intents), an operator's job, not a request's (databaseStatementTimeoutMs). */
export const standingRebuildStatementTimeoutMs = 600_000;
assertLimit(routeParameterLengthMax >= 3 * didLengthMax, 'an operator DID percent-encoded whole must fit in a path parameter');

// ---- Agent tool policy documents (docs/policy-documents.md) ----
/** Tools one policy document declares (and tool overrides one overlay makes): an agent's tool belt, with room. */
export const policyDocumentToolsMax = 256;
/** Bytes of a policy document's canonical JSON: a document of policyDocumentToolsMax tools fits with room, and it
 * is answered back whole as an effective policy. */
export const policyDocumentBytesMax = 128 * 1024;
/** Issues one validation answers (errors and warnings each): past it the rest are summed up in one issue, so an answer
 * stays small whatever the document holds. */
export const policyDocumentIssuesMax = 100;
assertLimit(policyDocumentBytesMax < requestBodyBytesMax, 'a policy document must fit in a request body');

// ---- Agent runs and their trace events (docs/agent-runs.md) ----
/** Runs one intent may have: a run is one bind of an agent's middleware to the intent, and an intent is one task. */
export const agentRunsPerIntentMax = 100;
/** Trace events one run keeps: a tool call makes about six, so some 160 calls; past it the run takes no more. */
export const agentRunTraceEventsPerRunMax = 1_000;
/** Trace events one request reports (the public client sends one at a time; a batching reporter may send more). */
export const agentRunTraceEventsPerRequestMax = 100;
/** Bytes of one trace event's canonical JSON: an event is a few ids, a message and a few attestations. */
export const agentRunTraceEventBytesMax = 4 * 1024;
/** Characters of a run's operation and completion preset as the client registers them. */
export const agentRunTextLengthMax = 256;
assertLimit(agentRunTraceEventsPerRequestMax * agentRunTraceEventBytesMax < requestBodyBytesMax, 'a full batch of trace events must fit in a request body');
assertLimit(agentRunTraceEventsPerRequestMax <= agentRunTraceEventsPerRunMax, 'one request cannot report more than a run keeps');

// ---- The public client's own reports (docs/wire-compatibility.md#what-the-client-calls) ----
/** Bytes of one usage report of the client's CLI: a few short fields; anything larger is not one. */
export const clientReportBytesMax = 4 * 1024;

// ---- Console (docs/console.md) ----
/** Bytes of one console form post: the largest form (a policy test with its evidence) stays far below it. */
export const consoleFormBytesMax = 64 * 1024;
assertLimit(consoleFormBytesMax < requestBodyBytesMax, 'a console form must fit in a request body');

// ---- Protocol v2: mandates and receipts (docs/protocol.md) ----
/** A tool call id kept in an action receipt (and its row's CHECK): clients mint UUIDs or vendor call ids, far shorter. */
export const toolCallIdLengthMax = 256;
/** Each optional string of a mandate import's transport binding (partner platform, external id, request id). */
export const transportBindingFieldLengthMax = 256;
/** Entries of an agent receipt's `external_attestations` sent with one evidence submission: each is the digest of
 * something the client verified (a mandate, a partner's receipt); a tool call carries a handful. */
export const externalAttestationsMax = 16;
/** Bytes of the `x-svc-agent-receipt-attestations` header: the entries at about 300 bytes each, with room. */
export const externalAttestationsHeaderBytesMax = 8 * 1024;
/** An attestation's `kind` (the client's are like `agent_mandate_v1`, `delivery_receipt_v1`). */
export const externalAttestationKindLengthMax = 128;
/** An attestation's `reference_id`: a partner's id or a resource URL. */
export const externalAttestationReferenceLengthMax = 256;

// ---- Route contracts (src/contracts/) ----
/** A public key or signature in an intent envelope, as base64 text: an Ed25519 signature (64 bytes) is 88
 * characters; the bound leaves room for padding variants without admitting a payload. */
export const envelopeBase64LengthMax = 128;
/** `predicate_ref`: `<template_id>@<version_seq>`, at most 64 + 1 + 10 characters; the bound is looser on purpose,
 * so that a malformed ref gets its own code (`intent.predicate_missing`) rather than a schema refusal. */
export const predicateRefLengthMax = 200;
/** An archetype preset id (`completion_v1`); the catalogue's are far shorter. */
export const completionPresetIdLengthMax = 128;

// ---- Gateway route contracts (src/contracts/, src/surfaces/gateway/routes/) ----
/** A device login's user code as typed (ours are 9 characters, `BCDF-GHJK`); longer text is no code at all. */
export const deviceUserCodeInputLengthMax = 32;
/** A device code as sent to the token route (ours are 101 characters); a longer one is `invalid_grant` unread. */
export const deviceCodeInputLengthMax = 256;
/** A managed policy template id as a sandbox bootstrap names it (the catalogue's ids are far shorter). */
export const templateIdLengthMax = 64;
/** Each field of an audit export's filter as sent (an RFC 3339 time or an intent UUID), before it is parsed. */
export const auditExportFilterFieldLengthMax = 64;
/** The intent_id a /verify call names: any text up to this (one that names no intent of the token is a deny). */
export const verifyIntentIdLengthMax = 64;

/** The reference an operator records for a rail instruction it carried out itself (an x402 transfer's transaction
 * hash is 66 characters; other rails' ids are shorter): room to spare, bounded. */
export const railInstructionReferenceLengthMax = 200;

// ---- Events and webhooks (docs/events.md) ----
/** How long an event is kept (and readable by GET /v1/events); the maintenance pass deletes older ones, with their
 * deliveries. Longer than the delivery window, so no event is deleted while it is still being delivered. */
export const eventRetentionMs = 30 * 24 * 60 * 60_000;
/** Events (and their deliveries) one maintenance pass deletes; the rest wait for the next pass. */
export const eventPrunePerPassMax = 10_000;
/** Characters of a webhook endpoint's URL and description; enabled event types per endpoint; endpoints per tenant. */
export const webhookUrlLengthMax = 2048;
export const webhookDescriptionLengthMax = 512;
export const webhookEnabledEventsMax = 64;
export const webhookEndpointsPerTenantMax = 16;
/** How long the replaced signing secret still signs deliveries after a rotation when the request names none. */
export const webhookSecretOverlapSecondsDefault = 24 * 60 * 60;
/**
 * When each retry of a delivery is due, after the attempt before it failed (Standard Webhooks' suggested schedule):
 * the first attempt at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h — about 28 h in all. Each wait is
 * jittered by ±webhookRetryJitter so that a receiver coming back is not hit by every retry at once. After the last,
 * the delivery is `failed` (redeliver it by hand).
 */
export const webhookRetryDelaysMs: readonly number[] = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000];
export const webhookRetryJitter = 0.2;
/** Deadline of one delivery attempt: connect, send and the receiver's answer. */
export const webhookAttemptTimeoutMsDefault = 10_000;
/** How long a claimed attempt is the claiming replica's: longer than an attempt may take, so that only a dead
 * replica's attempt is claimed again. */
export const webhookLeaseMs = webhookAttemptTimeoutMsDefault * 3;
/** Deliveries one deliverer claims at once, and how often it looks when it found none due. */
export const webhookClaimBatchMax = 32;
export const webhookPollIntervalMs = 1_000;
/** An endpoint is disabled (`webhook_endpoint.disabled`) once its attempts have failed this many times in a row and
 * for at least webhookDisableAfterFailingMs (a day) with no success between: less than one delivery's whole schedule,
 * so an endpoint that never answers is disabled before its first event is given up. */
export const webhookDisableAfterFailures = 20;
export const webhookDisableAfterFailingMs = 24 * 60 * 60_000;
assertLimit(webhookDisableAfterFailingMs < webhookRetryDelaysMs.reduce((sum, delay) => sum + delay, 0), 'an endpoint failing through one whole schedule must be disabled');
/** Bytes of a receiver's answer read (and kept, in part, in the attempt log); the rest is discarded. */
export const webhookResponseBytesMax = 4096;
assertLimit(webhookLeaseMs > webhookAttemptTimeoutMsDefault, 'a lease must outlast the attempt it covers');
assertLimit(webhookRetryDelaysMs.reduce((sum, delay) => sum + delay, 0) * (1 + webhookRetryJitter) < eventRetentionMs, 'an event must outlive its delivery window');

// ---- Review holds (docs/release-gate.md) ----

/** Items the review queue answers when the client names no limit; its largest page is the client's own bound, 500. */
export const reviewQueueLimitDefault = 50;
export const reviewQueueLimitMax = 500;
/** Signals and review events an operator's review status lists, newest first. */
export const reviewStatusEntriesMax = 100;
/** When the fraud metrics call the gate's metrics reliable (reported to the client; a hold never depends on it):
 * enough holds resolved and reviewer outcomes recorded over the last 30 days, and a precision (confirmed risk among
 * labelled outcomes) above the floor. */
export const reviewReliabilityMinReviewed = 20;
export const reviewReliabilityMinLabeled = 20;
export const reviewReliabilityMinSignalFamilyLabeled = 5;
export const reviewReliabilityMinPrecisionBps = 5000;
/** Days without a labelled outcome after which the metrics are stale. */
export const reviewReliabilityStaleDays = 14;
