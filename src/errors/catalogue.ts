// The one catalogue of error codes: each stable dotted code with its HTTP status and a safe default message.
// docs/errors.md documents every code; test/errors/catalogue.test.ts keeps the two in sync. Never reuse a code.
import { dependencyUnavailableRetryAfterSeconds, operatorActionRetryAfterSeconds, railRetryAfterSecondsDefault } from '../limits.ts';

export interface CatalogueEntry {
  readonly status: number;
  readonly message: string;
  /** Every 503 has one, and only a 503: its `Retry-After` in seconds, unless the error sets a header of its own. */
  readonly retryAfterSeconds?: number;
}

export const errorCatalogue = {
  // ---- request: the HTTP envelope itself ----
  'request.invalid': { status: 400, message: 'The request does not match the route schema.' },
  'request.malformed_json': { status: 400, message: 'The request body is not valid JSON.' },
  'request.empty_body': { status: 400, message: 'The request has a JSON content type but no body.' },
  'request.unsupported_media_type': { status: 415, message: 'The request body must be application/json, in UTF-8.' },
  'request.body_too_large': { status: 413, message: 'The request body is larger than the service accepts.' },
  'request.route_not_found': { status: 404, message: 'No route matches this method and path.' },
  'request.timeout': { status: 408, message: 'The request took too long to arrive.' },
  'request.tenant_hint_mismatch': { status: 401, message: 'The tenant named in the request does not match the credential.' },
  'request.tenant_header_refused': { status: 400, message: 'This route takes its tenant from the credential alone and refuses an x-tenant-id header; send the request without it.' },
  'request.malformed_url': { status: 400, message: 'The URL has a bad percent-encoding: a % not followed by two hex digits, or escapes that are not UTF-8.' },
  'request.url_too_long': { status: 414, message: 'The URL, or one of its path parameters, is longer than the service accepts.' },
  'request.headers_too_large': { status: 431, message: 'The request line and headers are larger than the service accepts.' },
  'request.malformed_http': { status: 400, message: 'The request is not well-formed HTTP/1.1.' },
  'request.method_not_allowed': { status: 405, message: 'This path does not take this method; the Allow header lists the methods it takes.' },
  'request.not_acceptable': { status: 406, message: 'The Accept header does not admit what this route answers; MCP clients must accept application/json and text/event-stream.' },
  'request.character_invalid': { status: 400, message: 'A string contains U+0000 or an unpaired surrogate, which the service cannot store; details.location and details.path point at it.' },
  'request.prototype_key_forbidden': { status: 400, message: 'The body has a "__proto__" key, or a "constructor" key holding "prototype": keys that can alter objects on the server are refused; details.path points at it.' },
  'request.nesting_too_deep': { status: 400, message: 'The body nests arrays and objects deeper than the service accepts.' },
  'request.number_out_of_range': { status: 400, message: 'A number in the body is too large to be held as a double (past about 1.8e308); details.path points at it.' },
  'request.expectation_failed': { status: 417, message: 'The Expect header asks for something this service does not do; only 100-continue is supported.' },
  'request.content_encoding_unsupported': { status: 415, message: 'The request body is content-coded (gzip, br, …), which this service does not decode; send it uncoded (identity).' },

  // ---- auth: credentials and roles ----
  'auth.credential_missing': { status: 401, message: 'This route needs an Authorization: Bearer credential.' },
  'auth.credential_invalid': { status: 401, message: 'The credential is not valid.' },
  'auth.credential_revoked': { status: 401, message: 'The credential has been revoked.' },
  'auth.credential_rotated': { status: 401, message: "This API key's secret was replaced by a rotation and its overlap window has ended; use the key the rotation answered." },
  'auth.role_insufficient': { status: 403, message: 'The credential does not have a role that may call this route.' },
  'auth.scope_insufficient': { status: 403, message: 'The restricted key does not carry a scope this route needs.' },

  // ---- sign-in: one-time codes, session tokens, users (docs/sign-in.md) ----
  'auth.code_invalid': { status: 401, message: 'The sign-in code is wrong, expired or already used, or the challenge is locked after too many attempts; start again.' },
  'auth.tenant_required': { status: 409, message: 'The email belongs to several tenants, or not to the one named; repeat with tenant_id set to one of details.tenant_ids.' },
  'auth.credential_expired': { status: 401, message: 'The session token has expired; sign in again.' },
  'user.email_invalid': { status: 400, message: 'An email address is 3 to 254 characters: a local part, "@" and a domain, without spaces or control characters.' },
  'user.already_member': { status: 409, message: 'This email is already a member of the tenant.' },

  // ---- tenant ----
  'tenant.not_found': { status: 404, message: 'No such tenant.' },
  'tenant.already_exists': { status: 409, message: 'A tenant with this tenant_id already exists.' },
  'tenant.id_invalid': { status: 400, message: 'A tenant_id is 1 to 64 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit.' },

  // ---- event: the event log (docs/events.md) ----
  'event.not_found': { status: 404, message: 'No such event (or it is older than the retention).' },

  // ---- webhook_endpoint: where a tenant's events are sent (docs/events.md#webhook-endpoints) ----
  'webhook_endpoint.not_found': { status: 404, message: 'No such webhook endpoint.' },
  'webhook_endpoint.url_invalid': { status: 400, message: 'The endpoint url must be an absolute https (or http) URL without credentials or fragment.' },
  'webhook_endpoint.destination_refused': { status: 400, message: 'The endpoint url names an address this tenant may not send to (private, loopback or link-local for a live tenant); the operator may allow them with SVC_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS.' },
  'webhook_endpoint.limit_reached': { status: 409, message: 'The tenant has as many webhook endpoints as it may; delete one first.' },
  'webhook_endpoint.secrets_key_missing': { status: 503, retryAfterSeconds: operatorActionRetryAfterSeconds, message: 'This deployment has no SVC_SECRETS_KEY, so it cannot store a webhook signing secret; the operator must configure one.' },

  // ---- api_key: service-account key administration ----
  'api_key.not_found': { status: 404, message: 'No such API key.' },
  'api_key.revoked': { status: 409, message: 'The API key is revoked; a revoked key cannot be rotated. Create a new one.' },
  'api_key.scope_unknown': { status: 400, message: 'A scope is not in the MCP scope catalogue (or asks for more than its highest level), and no preset has this name; docs/mcp.md lists both.' },

  // ---- registry: the tenant key registry ----
  'registry.key_not_found': { status: 404, message: 'No such registered key.' },
  'registry.public_key_invalid': { status: 400, message: 'The public key is not a valid Ed25519 point.' },
  'registry.key_already_registered': { status: 409, message: 'This key is already registered and live for this subject.' },
  'registry.agent_key_id_taken': { status: 409, message: 'A live key is already registered under this agent key_id; revoke it first.' },

  // ---- predicate: release-rule documents (400 at intent or policy creation) ----
  'predicate.invalid': { status: 400, message: 'The predicate document is malformed.' },
  'predicate.version_unsupported': { status: 400, message: 'Only predicate_dsl version 1 is supported.' },
  'predicate.op_unknown': { status: 400, message: 'The clause has an op the language does not define.' },
  'predicate.depth_exceeded': { status: 400, message: 'The predicate nests and/or/not deeper than the limit.' },
  'predicate.fuel_exceeded': { status: 400, message: 'The predicate has more nodes than the fuel limit.' },
  'predicate.path_too_long': { status: 400, message: 'A path has more segments than the limit.' },
  'predicate.clauses_exceeded': { status: 400, message: 'An and/or has more clauses than the limit.' },
  'predicate.document_too_large': { status: 400, message: 'The canonical predicate document is larger than the limit.' },

  // ---- policy: managed templates and their parameters ----
  'policy.template_unknown': { status: 400, message: 'No managed policy template has this template_id.' },
  'policy.parameter_invalid': { status: 400, message: 'A template parameter is unknown, of the wrong type or out of range.' },
  'policy.version_not_found': { status: 404, message: 'This tenant has no such policy version.' },
  'policy.head_moved': { status: 409, message: 'The policy head is not the one the request expected; read the versions and decide again.' },
  'policy.rollback_precondition_required': { status: 428, message: 'A rollback needs expected_head_digest, target_digest and confirm=true.' },
  'policy.org_policy_not_found': { status: 404, message: "This tenant has rolled out no policy of that id: an org policy is the head of a managed template in the tenant's policy registry." },
  'policy.overlay_invalid': { status: 422, message: "The body is not a tenant overlay of this org policy: a version 2 policy document whose extends.org_policy_id is the path's; details.issues lists the problems." },
  'policy.widening_denied': { status: 422, message: 'The overlay widens what its org base allows; details.denied_widenings lists each attempt.' },
  'policy.effective_invalid': { status: 422, message: 'The overlay merges into a policy document that does not validate; details.issues lists the problems.' },

  // ---- funding: the rails behind POST /harbor/intents/{id}/fund (docs/rails.md) ----
  'funding.rail_not_configured': { status: 422, message: "This tenant has no usable configuration for the intent's settlement rail." },
  'funding.rail_unsupported': { status: 422, message: 'The intent names a settlement rail this service does not run.' },
  'funding.currency_not_allowed': { status: 422, message: 'The settlement rail cannot carry this currency.' },
  'funding.credential_conflict': { status: 400, message: 'The Authorization header and x-svc-payment-authorization carry different payment credentials; send one credential, or the same one in both.' },
  'rail.unavailable': { status: 503, retryAfterSeconds: railRetryAfterSecondsDefault, message: "The settlement rail's facilitator or processor could not be reached or failed; nothing moved. Retry the same request (same idempotency key) after Retry-After." },
  'rail_instruction.not_found': { status: 404, message: 'The intent has no rail instruction with this id.' },
  'rail_instruction.already_succeeded': { status: 409, message: 'The rail instruction has already succeeded; its reference stays as recorded.' },

  'integration.not_supported': { status: 422, message: 'This service does not run that provider integration; its rails are in details.supported_rails (docs/rails.md#provider-integrations).' },

  // ---- settlement_config: PUT/GET /v1/admin/settlement/config (docs/rails.md) ----
  'settlement_config.not_found': { status: 404, message: 'No settlement configuration has been set for this tenant.' },
  'settlement_config.invalid_rail_combination': { status: 400, message: 'rails must be a non-empty list of distinct known rails (x402_usdc_base, processor_mpp).' },
  'settlement_config.processor_destination_required': { status: 400, message: 'The processor_mpp rail needs a linked processor_destination.' },
  'settlement_config.x402_address_invalid': { status: 400, message: 'x402_address must be 0x and 40 hex digits (EIP-55 checksum if mixed case); x402_usdc_base requires it.' },
  'settlement_config.mpp_profile_invalid': { status: 400, message: 'mpp_profile_id must start with profile_test_ in sandbox and with profile_ (not profile_test_) in live; processor_mpp requires it.' },
  'settlement_config.settlement_recipient_required': { status: 400, message: 'mpp_session_enabled needs a settlement_network_recipient of 0x and 40 hex digits (EIP-55 checksum if mixed case).' },
  'settlement_config.x402_escrow_invalid': { status: 400, message: "x402_scheme must be exact or auth-capture; auth-capture needs x402_capture_authorizer (the facilitator's operator address, 0x and 40 hex digits)." },
  'settlement_config.rail_endpoint_invalid': { status: 400, message: 'A rail endpoint (x402_facilitator_url, mpp_processor_url) must be an absolute https URL (http only to a loopback host) without credentials, query or fragment.' },
  'settlement_config.rail_unreachable': { status: 503, retryAfterSeconds: railRetryAfterSecondsDefault, message: "A live rail's facilitator or processor could not be reached, timed out or failed (5xx, rate limited) on the configuration's dry call; details.field names the endpoint, details.reason what failed. Nothing was saved; send the same request again after Retry-After." },
  'settlement_config.rail_refused': { status: 400, message: "A live rail's facilitator or processor answered the configuration's dry call with a refusal (a key it does not accept, a network it does not support, an account it does not know); details.field names the field at fault, details.reason what failed. Nothing was saved." },
  'settlement_config.secrets_key_missing': { status: 503, retryAfterSeconds: operatorActionRetryAfterSeconds, message: 'This deployment has no SVC_SECRETS_KEY, so it cannot store (or use) a rail secret; the operator must configure one.' },

  // ---- signing: signed bytes and signatures ----
  'signing.value_invalid': { status: 400, message: 'A value to be signed is out of range or malformed.' },
  'signing.signature_invalid': { status: 400, message: 'The signature does not verify.' },
  'signing.version_deprecated': { status: 400, message: 'This signing version is deprecated and rejected.' },
  'signing.version_unsupported': { status: 400, message: 'This signing version is not supported.' },

  // ---- artifact: ed25519-sha256-json-v1 signed artifacts ----
  'artifact.schema_version_unsupported': { status: 400, message: 'The artifact has a schema_version this service does not know.' },
  'artifact.kind_unknown': { status: 400, message: 'The artifact kind is not one this service knows.' },
  'artifact.malformed': { status: 400, message: 'The artifact is missing fields or has fields of the wrong type.' },
  'artifact.signature_invalid': { status: 400, message: 'The artifact signature does not verify.' },
  'artifact.algorithm_unsupported': { status: 400, message: 'The artifact names a signing algorithm this service does not accept.' },
  'artifact.key_untrusted': { status: 400, message: 'The artifact is signed by a key that is not trusted here.' },
  'artifact.kind_mismatch': { status: 400, message: 'The artifact is of a kind this route does not take (a mandate sent to a receipt route, say).' },
  'artifact.signing_key_retired': { status: 400, message: 'The artifact is signed by a gateway key that is retired: published for reference, no longer trusted for new verifications.' },
  'artifact.tenant_mismatch': { status: 400, message: 'The artifact names another tenant than the credential\'s.' },

  // ---- recognition: agent recognition proofs (x-svc-agent-recognition-proof), all 401 ----
  'recognition.required': { status: 401, message: 'This request needs an x-svc-agent-recognition-proof header.' },
  'recognition.malformed': { status: 401, message: 'The recognition proof is not a well-formed proof (base64url of its JSON).' },
  'recognition.unsupported': { status: 401, message: 'The recognition proof has a kind or signature_algorithm this service does not accept (an unknown schema_version is artifact.schema_version_unsupported).' },
  'recognition.expired': { status: 401, message: 'The recognition proof has expired.' },
  'recognition.not_yet_valid': { status: 401, message: 'The recognition proof was issued in the future.' },
  'recognition.window_too_long': { status: 401, message: 'The recognition proof is valid for longer than 10 minutes.' },
  'recognition.tenant_mismatch': { status: 401, message: 'The recognition proof is bound to another tenant.' },
  'recognition.verifier_mismatch': { status: 401, message: 'The recognition proof is bound to another verifier.' },
  'recognition.purpose_mismatch': { status: 401, message: 'The recognition proof was made for another purpose.' },
  'recognition.method_mismatch': { status: 401, message: 'The recognition proof was made for another HTTP method.' },
  'recognition.path_mismatch': { status: 401, message: 'The recognition proof was made for another path.' },
  'recognition.body_mismatch': { status: 401, message: 'The recognition proof does not match the request body.' },
  'recognition.key_unknown': { status: 401, message: 'The recognition proof names a key_id that is not registered for this tenant.' },
  'recognition.key_revoked': { status: 401, message: 'The recognition proof names a revoked key.' },
  'recognition.key_mismatch': { status: 401, message: 'The key in the recognition proof is not the key registered for its key_id.' },
  'recognition.signature_invalid': { status: 401, message: 'The recognition proof signature does not verify.' },
  'recognition.nonce_replayed': { status: 401, message: 'The recognition proof nonce has already been used.' },

  // ---- protocol v2: mandates, receipts, task contracts (docs/protocol.md) ----
  'mandate.signer_unregistered': { status: 422, message: 'The mandate is signed by a key that is not a live registered principal key of its principal_subject.' },
  'mandate.expired': { status: 422, message: 'The mandate has expired.' },
  'mandate.spend_ceiling_exceeded': { status: 422, message: 'The intent\'s amount is above the mandate\'s spend ceiling.' },
  'mandate.currency_mismatch': { status: 422, message: 'The mandate\'s currency is not the intent\'s.' },
  'mandate.rail_not_allowed': { status: 422, message: 'The intent\'s settlement rail is not one of the mandate\'s allowed rails.' },
  'mandate.tool_not_allowed': { status: 422, message: 'One of the intent\'s allowed tools is not among the mandate\'s allowed tools; details.tools lists them.' },
  'mandate.action_not_allowed': { status: 422, message: 'The mandate\'s allowed actions do not include the action an intent needs (details.action).' },
  'mandate.agent_mismatch': { status: 422, message: 'The recognition proof\'s key_id is not the mandate\'s agent key_id.' },
  'mandate.nonce_replayed': { status: 409, message: 'This mandate (its nonce) has already been imported by this tenant.' },
  'receipt.not_found': { status: 404, message: 'No such receipt.' },
  'task_contract.not_found': { status: 404, message: 'No such task contract.' },

  // ---- idempotency, intents and evidence: the transaction engine ----
  'idempotency.key_invalid': { status: 400, message: 'An idempotency-key is 1 to 256 characters.' },
  'idempotency.key_reused': { status: 409, message: 'This idempotency-key was used for a different request; use a new key for a new request.' },
  'idempotency.request_in_progress': { status: 409, message: 'A request with this idempotency-key is still being processed; retry shortly with the same key and body.' },
  'intent.not_found': { status: 404, message: 'No such intent.' },
  'intent.already_exists': { status: 409, message: 'An intent with this intent_id already exists.' },
  'intent.invalid_state': { status: 409, message: 'The intent is not in a state that allows this operation.' },
  'intent.deadline_passed': { status: 409, message: "The intent's deadline has passed; confirm settlement to refund it." },
  'intent.deadline_invalid': { status: 422, message: 'The deadline must be a time in the future.' },
  'settlement.released_amount_invalid': { status: 422, message: 'The released part of a settlement is an integer from 0 to the intent\'s amount_cents; details give both.' },
  'intent.predicate_missing': { status: 400, message: 'A signing version 6 intent needs predicate_dsl or predicate_ref.' },
  'intent.predicate_conflict': { status: 400, message: 'predicate_dsl and predicate_ref name different rules; send one of them, or both naming the same rule.' },
  'intent.policy_binding_invalid': { status: 422, message: "The policy binding does not name this tenant's current head of that template." },
  'intent.principal_key_unregistered': { status: 422, message: 'In live, the principal_pubkey must be registered for the principal_did.' },
  'intent.evidence_schema_invalid': { status: 400, message: 'The evidence_schema uses a keyword or form this service does not accept.' },
  'intent.cursor_unknown': { status: 400, message: 'The cursor names no intent of this tenant; pass the next_cursor of the previous page, or no cursor for the first page.' },
  'evidence.payload_not_object': { status: 422, message: 'Evidence payload must be a JSON object.' },
  'evidence.schema_mismatch': { status: 422, message: "The evidence payload does not match the intent's evidence_schema." },
  'evidence.payee_mismatch': { status: 422, message: 'The payee_did or payee_pubkey is not the one committed when the intent was created.' },
  'evidence.attestations_invalid': { status: 400, message: 'The external attestations sent with the evidence (the x-svc-agent-receipt-attestations header, or metadata.external_attestations) are not a JSON array of {source, kind, digest_sha256_hex, reference_id?} within the limits; details.reason says what, details.index which entry.' },
  'evidence.agent_run_id_invalid': { status: 400, message: 'The x-svc-agent-run-id header is not a UUID.' },

  // ---- spend_decision and sandbox: POST /verify reservations, sandbox guardrails (docs/capabilities.md) ----
  'spend_decision.not_found': { status: 404, message: 'No such spend decision.' },
  'spend_decision.already_completed': { status: 409, message: 'The spend decision was already completed with the other outcome.' },
  'sandbox.live_tenant': { status: 403, message: 'Sandbox guardrail routes are for sandbox tenants only.' },
  'sandbox.completion_conflict': { status: 400, message: 'Give completion_preset alone, or template_id with optional parameters and evidence_schema, or neither for the default rule (completion_v1); parameters need a template_id.' },
  'sandbox.preset_unknown': { status: 400, message: 'No archetype preset has this completion_preset id.' },
  'sandbox.preset_evidence_mismatch': { status: 422, message: 'The evidence payload does not match the evidence schema of the completion_preset_id it names.' },
  'sandbox.metadata_too_large': { status: 400, message: 'The metadata object is larger than the limit.' },
  'sandbox.operation_mismatch': { status: 422, message: 'The operation is not the one the sandbox guardrail intent was bootstrapped for.' },

  // ---- agent_run: agent runs and their trace events (docs/agent-runs.md) ----
  'agent_run.not_found': { status: 404, message: 'No such agent run; register it with PUT /v1/agent-runs/{run_id} first.' },
  'agent_run.intent_mismatch': { status: 409, message: 'This run id is registered for another intent; a run belongs to one intent.' },
  'agent_run.limit_reached': { status: 422, message: 'The intent has as many agent runs as it may keep.' },
  'agent_run.trace_event_invalid': { status: 400, message: 'A trace event does not belong to this run or is too large; details.index names it.' },
  'agent_run.trace_events_exceeded': { status: 422, message: 'The run would hold more trace events than it may keep; nothing of this report was stored.' },

  // ---- rate_limit: gateway rate limits (docs/operations.md "Rate limits") ----
  'rate_limit.exceeded': { status: 429, message: 'Too many requests for this credential or client address; retry after the seconds in Retry-After.' },

  // ---- sso: OpenID Connect single sign-on (docs/sso.md) ----
  'sso.config_invalid': { status: 400, message: 'The SSO configuration is invalid: the issuer and redirect_uri must be https URLs (http only on a loopback host) without query or fragment; details.field names the field.' },
  'sso.not_configured': { status: 404, message: 'This tenant has no single sign-on configuration.' },
  'sso.provider_unavailable': { status: 502, message: "The tenant's identity provider could not be reached or its discovery document is unusable; retry later." },
  'sso.state_invalid': { status: 401, message: 'The SSO state is unknown, already used or expired; start again.' },
  'sso.exchange_failed': { status: 401, message: 'The identity provider did not give a valid answer for this sign-in; start again.' },
  'sso.email_unverified': { status: 401, message: 'The identity provider did not give a verified email address for this person.' },
  'sso.email_domain_not_allowed': { status: 403, message: "The email's domain is not one this tenant allows for single sign-on." },

  // ---- device_login: RFC 8628 device login for the CLI and SDK (docs/sign-in.md#device-login) ----
  'device_login.request_invalid': { status: 400, message: 'The device token request is missing device_code or grant_type, or a parameter is malformed (RFC 8628 invalid_request).' },
  'device_login.grant_type_unsupported': { status: 400, message: 'grant_type must be urn:ietf:params:oauth:grant-type:device_code (RFC 8628 unsupported_grant_type).' },
  'device_login.device_code_invalid': { status: 400, message: 'The device code is unknown or has already been redeemed for a token; start a new device login (RFC 8628 invalid_grant).' },
  'device_login.authorization_pending': { status: 400, message: 'Nobody has approved this device login yet; poll again after the interval (RFC 8628 authorization_pending).' },
  'device_login.slow_down': { status: 400, message: 'The device polls faster than its interval; the interval grew by 5 seconds, wait that long between polls from now on (RFC 8628 slow_down).' },
  'device_login.access_denied': { status: 400, message: 'The device login was denied, or the approving person has since lost the membership; start again if this is unexpected (RFC 8628 access_denied).' },
  'device_login.expired_token': { status: 400, message: 'The device code expired before it was approved and redeemed; start a new device login (RFC 8628 expired_token).' },
  'device_login.not_found': { status: 404, message: 'No device login waits for this user code: it is mistyped, expired, or already decided in another tenant.' },
  'device_login.already_decided': { status: 409, message: 'This device login was already approved or denied; the device must start again to be decided anew.' },
  'device_login.session_required': { status: 403, message: 'Only a signed-in person (a session token) can approve or deny a device login; an API key cannot.' },
  'device_login.grant_invalid': { status: 400, message: 'grant api_key needs key_role, key_role is given only with grant api_key, and only an approval grants anything.' },
  'device_login.api_key_sandbox_only': { status: 403, message: 'Only a sandbox tenant can grant a device an API key; approve it with a session instead.' },
  'device_login.environment_mismatch': { status: 409, message: "This device asked for an API key of another environment than your tenant's; approve it signed in to a tenant of that environment." },

  // ---- audit_export: compliance audit exports and their bundle downloads (docs/audit-exports.md) ----
  'audit_export.not_found': { status: 404, message: 'No such audit export.' },
  'audit_export.gone': { status: 410, message: 'The audit export has expired or been deleted; request a fresh export.' },
  'audit_export.not_ready': { status: 409, message: 'The audit export has no bundle to download yet (it is pending or failed).' },
  'audit_export.filter_invalid': { status: 400, message: 'The export filter is invalid: time_start and time_end are RFC 3339 UTC times, time_start before time_end; intent_id is a UUID.' },
  'audit_export.too_large': { status: 422, message: 'The export would exceed the bundle limits; narrow the filter (time range or intent_id).' },
  'audit_export.download_token_expired': { status: 401, message: 'The download token has expired; get a fresh one with GET /v1/compliance/audit-exports/{job_id}?issue_download=1.' },

  // ---- merkle: the transparency log's tree heads and proofs (docs/protocol.md#transparency-log) ----
  'merkle.tree_head_missing': { status: 404, message: "The tenant's transparency log has no signed tree head yet: no receipt has been issued, or the first head is still being signed (a few seconds)." },
  'merkle.parameter_invalid': { status: 400, message: 'A proof parameter is not a decimal integer in range: leaf_index from 0, tree_size, first and second from 1; details.parameter names it.' },
  'merkle.leaf_out_of_range': { status: 422, message: 'leaf_index is not below tree_size: the tree of that size does not hold the leaf.' },
  'merkle.tree_size_out_of_range': { status: 422, message: 'tree_size (or second) is larger than the latest signed tree head; details.latest_tree_size gives the largest size that can be proven.' },
  'merkle.inclusion_pending': { status: 404, message: "No signed tree head covers the receipt's leaf yet: heads are signed every few seconds; retry after Retry-After. details.leaf_index and details.signed_tree_size say how far the log is signed." },
  'merkle.consistency_range_invalid': { status: 422, message: 'first is larger than second: a consistency proof goes from an older, smaller tree to a newer one.' },

  // ---- standing: operator receipts and the portfolio snapshot (docs/standing.md) ----
  'standing.operator_unknown': { status: 404, message: 'This tenant has no settled history with that operator.' },
  'standing.score_version_unsupported': { status: 400, message: 'The score_version is not one this service scores with; details.supported_versions lists those it does.' },
  'standing.export_too_large': { status: 422, message: 'The tenant has more operators than one signed portfolio snapshot carries.' },
  'review.deadline_passed': { status: 409, message: 'The held intent\'s deadline has passed: only a refund resolves it now (details.allowed_resolutions).' },
  'review.operator_unknown': { status: 404, message: 'This tenant has no intent paid to that operator and no review event about it.' },
  'review.intent_operator_mismatch': { status: 422, message: 'The intent named in the review event is not paid to that operator.' },
  'standing.summary_too_large': { status: 422, message: 'The tenant has more operators than one portfolio summary aggregates.' },

  // ---- mcp: the MCP endpoint (docs/mcp.md) ----
  'mcp.protocol_version_unsupported': { status: 400, message: 'The MCP-Protocol-Version header names a protocol version this server does not speak; details.supported_versions lists those it does.' },

  // ---- console: the operator console's own refusals (docs/console.md) ----
  'console.csrf_invalid': { status: 403, message: 'This form was not sent from a console page you opened (its security token is missing or does not match); reload the page and try again.' },
  'console.key_kind_conflict': { status: 400, message: 'The kind of key and its scopes disagree: a standard key takes no scopes, a restricted key needs at least one. No key was created.' },

  // ---- internal ----
  'internal.error': { status: 500, message: 'An unexpected error occurred. Quote the request_id when reporting it.' },
  'internal.unavailable': { status: 503, retryAfterSeconds: dependencyUnavailableRetryAfterSeconds, message: 'A dependency of the service is temporarily unavailable. Retry with backoff.' },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof errorCatalogue;

// Every 503 says when to come back, and nothing else claims to: asserted once at load, a violation is a programmer error.
for (const [code, entry] of Object.entries(errorCatalogue) as Array<[ErrorCode, CatalogueEntry]>) {
  if ((entry.status === 503) !== (entry.retryAfterSeconds !== undefined)) {
    throw new Error(`catalogue: ${code} must have retryAfterSeconds exactly when its status is 503`);
  }
}

/** The `Retry-After` of an answer with `code`, in seconds: the catalogue's, for every 503; undefined otherwise. */
export function retryAfterSecondsOf(code: ErrorCode): number | undefined {
  return (errorCatalogue[code] as CatalogueEntry).retryAfterSeconds;
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(errorCatalogue, value);
}
