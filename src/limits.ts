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
/** Byte size of the canonical (sorted-key, compact) JSON of a predicate document (DESIGN.md §4). */
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
/** Server-side bounds on how long a request may wait for its headers, its body and its answer. */
export const requestTimeoutMs = 30_000;
/** How long shutdown waits for in-flight requests before exiting anyway. */
export const shutdownGraceMs = 10_000;

// ---- Tenants and credentials (DESIGN.md §2) ----
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

// ---- Database ----
/** Connections in one process's pool. */
export const databasePoolSizeMax = 20;
/** A statement running longer than this is cancelled by Postgres. */
export const databaseStatementTimeoutMs = 15_000;

// Relationships between limits, asserted once at load: a violated one is a programmer error.
function assertLimit(condition: boolean, message: string): void {
  if (!condition) throw new Error(`limits.ts: ${message}`);
}
assertLimit(pageSizeDefault <= pageSizeMax, 'the default page must fit in the largest page');
assertLimit(predicateClausesMax < predicateFuelMax, 'a full and/or must be visitable within the fuel');
assertLimit(predicateDepthMax < predicateFuelMax, 'the deepest valid tree must be visitable within the fuel');
assertLimit(predicateDocumentBytesMax < requestBodyBytesMax, 'a valid predicate must fit in a request body');
assertLimit(databaseStatementTimeoutMs < requestTimeoutMs, 'a statement must time out before its request does');

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
/** Longest `expires_at - issued_at` of a recognition proof (client-wire.md §8.1: at most 10 minutes). */
export const recognitionProofWindowMsMax = 10 * 60_000;
/** How far in the future `issued_at` may lie: clocks of clients and replicas drift; a proof from later is refused. */
export const recognitionClockSkewMs = 30_000;
/** Characters of a recognition-proof nonce (client-wire.md §8.1). */
export const recognitionNonceLengthMax = 256;

// ---- Transaction engine ----
/** How long a stored idempotent answer is kept at least (spec: keys kept 24 h at least; DESIGN.md §3). */
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
/** How long an MPP `Payment` challenge may be answered (its `expires`); long enough for a person to approve. */
export const mppChallengeLifetimeMs = 15 * 60_000;
/** x402 `maxTimeoutSeconds`: how long the payer's authorization may take to settle. */
export const x402MaxTimeoutSeconds = 300;
/** A rail credential header (`payment-signature`, `x-svc-payment-authorization`) as sent. Real ones are ~1–2 KB. */
export const paymentCredentialHeaderBytesMax = 16 * 1024;
/** Rails in one settlement configuration: each known rail at most once. */
export const settlementRailsMax = 8;
/** Length of an MPP profile id and of a linked processor destination (e.g. a connected account id). */
export const mppProfileIdLengthMax = 128;
export const processorDestinationLengthMax = 255;
assertLimit(paymentCredentialHeaderBytesMax < requestBodyBytesMax, 'a credential header must be smaller than a body');

// ---- Ledger ----
/** Page of `GET /harbor/ledger/v1/events` (client-wire.md §12.4: limit 1..256, default 64). */
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
/** Expired intents refunded per maintenance pass; the rest wait for the next pass. */
export const maintenanceIntentsPerPassMax = 200;

// ---- Capability tokens ----
/** Longest life of a capability token; it also ends at the intent's deadline, whichever comes first. */
export const capabilityTokenLifetimeMaxSeconds = 24 * 60 * 60;
