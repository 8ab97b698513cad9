# `SvcClient.open(api_key=...)` and `AsyncSvcClient.open(...)`: resolve the gateway URL and the credential's tenant
# (GET /v1/auth/principal), then hand out the sub-APIs bound to that tenant. Tenant scope comes from the credential
# only. Both clients run the same flows; the async one answers awaitables from every sub-API method.
from __future__ import annotations

import os
import random as random_module
import time
from datetime import datetime
from typing import Any, Callable, Mapping, Sequence

import httpx

from . import audit_exports, capabilities, intents, ledger, policies, registry, review
from .audit_bundle import AuditBundleReport, verify_audit_bundle
from .core import AgentIdentity, ClientCore
from .defaults import ATTEMPTS_MAX_DEFAULT, ATTEMPTS_MAX_LIMIT, REQUEST_TIMEOUT_SECONDS_DEFAULT, RETRY_BUDGET_SECONDS_DEFAULT
from .errors import EngineHttpError, GatewayAuthError, SvcConfigurationError, SvcResponseError
from .transport import Flow, RequestSpec, TransportConfig, async_sleep, request_flow, run_async, run_sync
from .stored_login import resolve_credential
from .url import resolve_gateway_base_url
from .wire_types import (
    EvidenceAnswer,
    Intent,
    IntentList,
    LedgerAuthority,
    LedgerEventsPage,
    LedgerTip,
    PolicyVersion,
    PolicyVersionList,
    RegisteredKey,
    RegisteredKeyList,
    SettlementAnswer,
    SpendDecision,
    VerifyResult,
)


def _positive(value: float | None, fallback: float, name: str, maximum: float | None = None, integer: bool = False) -> Any:
    chosen = fallback if value is None else value
    valid = isinstance(chosen, (int, float)) and not isinstance(chosen, bool) and chosen > 0 and (maximum is None or chosen <= maximum)
    if integer:
        valid = valid and isinstance(chosen, int)
    if not valid:
        raise SvcConfigurationError(f"{name} must be a positive {'integer' if integer else 'number'}{'' if maximum is None else f' up to {maximum}'}.")
    return chosen


def _principal_flow(config: TransportConfig, expected_environment: str | None) -> Flow[dict[str, Any]]:
    """The principal lookup is the one call without `x-tenant-id`: it is how the tenant is learned."""
    try:
        response = yield from request_flow(config, RequestSpec("GET", "/v1/auth/principal", True))
    except EngineHttpError as error:
        code = f" {error.code}" if error.code else ""
        raise GatewayAuthError(f"The principal lookup was refused: HTTP {error.status_code}{code}.", error.status_code, error.body_text) from error
    try:
        body = response.json_object()
    except SvcResponseError:
        raise GatewayAuthError("The principal lookup answered something that is not a JSON object.", response.status, response.body_text) from None
    if not isinstance(body.get("tenant_id"), str) or body["tenant_id"] == "" or not isinstance(body.get("environment"), str):
        raise GatewayAuthError("The principal answer has no tenant_id or environment.", response.status, response.body_text)
    if expected_environment is not None and body["environment"] != expected_environment:
        raise GatewayAuthError(f"The credential is of a {body['environment']} tenant, not {expected_environment}.")
    return body


class _Api:
    """A sub-API: each method builds a flow and hands it to the client's driver. The return annotations describe the
    synchronous client; the asyncio client's methods answer awaitables of the same values."""

    def __init__(self, core: ClientCore, run: Callable[[Flow[Any]], Any]):
        self._core = core
        self._run = run


class Intents(_Api):
    def create(
        self, *, principal: intents.SigningParty, payee: intents.PayeeParty, amount_cents: int, deadline: str | datetime,
        settlement_rail: str, allowed_tools: Sequence[str], currency: str = "usd", evidence_schema: Mapping[str, Any] | None = None,
        budget: Mapping[str, Any] | None = None, predicate: Mapping[str, Any] | None = None, predicate_ref: str | None = None,
        policy_binding: intents.PolicyBinding | Mapping[str, Any] | None = None, intent_id: str | None = None, idempotency_key: str | None = None,
    ) -> Intent:
        """Builds, signs (principal key) and sends a v6 or v7 creation envelope; answers the intent (`open`). Give
        exactly one of predicate (v6), predicate_ref (v6) and policy_binding (v7)."""
        return self._run(intents.create_flow(
            self._core, principal=principal, payee=payee, amount_cents=amount_cents, deadline=deadline, settlement_rail=settlement_rail,
            allowed_tools=allowed_tools, currency=currency, evidence_schema=evidence_schema, budget=budget, predicate=predicate,
            predicate_ref=predicate_ref, policy_binding=policy_binding, intent_id=intent_id, idempotency_key=idempotency_key,
        ))

    def fund(self, intent_id: str, credential: Callable[[intents.FundChallenge], Any], idempotency_key: str | None = None,
             poll_interval_seconds: float = 2.0, polls_max: int = 30) -> intents.FundResult:
        """Funds an open intent through its rail's 402 handshake; `credential` answers the challenge."""
        return self._run(intents.fund_flow(self._core, intent_id, credential, idempotency_key, poll_interval_seconds, polls_max))

    def submit_evidence(
        self, intent_id: str, *, payee: intents.SigningParty, payload: Mapping[str, Any], artifacts: Sequence[str] = (),
        submitted_at: str | datetime | None = None, idempotency_key: str | None = None,
    ) -> EvidenceAnswer:
        """Signs EvidenceSignV1 with the payee key and submits it; the answer says whether the rule passed."""
        return self._run(intents.submit_evidence_flow(
            self._core, intent_id, payee=payee, payload=payload, artifacts=artifacts, submitted_at=submitted_at, idempotency_key=idempotency_key,
        ))

    def confirm(self, intent_id: str, expected_action: str | None = None, idempotency_key: str | None = None) -> SettlementAnswer:
        return self._run(intents.confirm_flow(self._core, intent_id, expected_action, idempotency_key))

    def get(self, intent_id: str) -> Intent:
        return self._run(intents.get_flow(self._core, intent_id))

    def list(self, limit: int | None = None, state: str | None = None, cursor: str | None = None) -> IntentList:
        return self._run(intents.list_flow(self._core, limit, state, cursor))


class Spend(_Api):
    def complete(self, decision_id: str, outcome: str) -> SpendDecision:
        return self._run(capabilities.complete_flow(self._core, decision_id, outcome))


class Capabilities(_Api):
    def verify(self, intent_id: str, token: str, operation: str, requested_spend_cents: int = 0, **options: Any) -> VerifyResult:
        """POST /verify; SvcCapabilityError when denied unless `throw_on_deny=False`."""
        return self._run(capabilities.verify_flow(self._core, intent_id, token, operation, requested_spend_cents, **options))

    def guard(self, tool: Callable[[dict[str, Any]], Any], intent_id: str, token: str, operation: str, requested_spend_cents: int = 0, **options: Any) -> Any:
        """Runs `tool(decision)` under a capability: verify, run, complete (`consumed`, or `released` if it raised)."""
        return self._run(capabilities.guard_flow(
            self._core, tool, intent_id=intent_id, token=token, operation=operation, requested_spend_cents=requested_spend_cents, **options,
        ))


class Policies(_Api):
    def templates(self) -> list[dict[str, Any]]:
        return self._run(policies.templates_flow(self._core))

    def preview(self, template_id: str, parameters: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return self._run(policies.preview_flow(self._core, template_id, parameters))

    def test(self, **params: Any) -> dict[str, Any]:
        """Dry-run of a rule against sample evidence: evidence, and template_id (+ parameters) or predicate_dsl."""
        return self._run(policies.dry_run_flow(self._core, **params))

    def draft(self, template_id: str, parameters: Mapping[str, Any] | None = None) -> PolicyVersion:
        return self._run(policies.draft_flow(self._core, template_id, parameters))

    def rollout(self, template_id: str, version_seq: int, expected_head_digest: str | None = None) -> dict[str, Any]:
        return self._run(policies.rollout_flow(self._core, template_id, version_seq, expected_head_digest))

    def publish(self, template_id: str, parameters: Mapping[str, Any] | None = None) -> PolicyVersion:
        return self._run(policies.publish_flow(self._core, template_id, parameters))

    def versions(self, template_id: str, limit: int | None = None, cursor: int | None = None) -> PolicyVersionList:
        return self._run(policies.versions_flow(self._core, template_id, limit, cursor))

    def version(self, template_id: str, version_seq: int | None = None) -> PolicyVersion:
        return self._run(policies.policy_version_flow(self._core, template_id, version_seq))


class Ledger(_Api):
    def tip(self) -> LedgerTip:
        return self._run(ledger.tip_flow(self._core))

    def authority(self) -> LedgerAuthority:
        return self._run(ledger.authority_flow(self._core))

    def events(self, after_seq: int | None = None, limit: int | None = None) -> LedgerEventsPage:
        return self._run(ledger.events_flow(self._core, after_seq, limit))

    def verify_chain(self, trusted_public_keys_hex: Sequence[str] | None = None) -> ledger.LedgerVerification:
        return self._run(ledger.verify_chain_flow(self._core, trusted_public_keys_hex))


class Registry(_Api):
    def register(self, kind: str, subject: str, public_key: Any) -> RegisteredKey:
        return self._run(registry.register_flow(self._core, kind, subject, public_key))

    def list(self, kind: str | None = None, subject: str | None = None, limit: int | None = None, cursor: str | None = None) -> RegisteredKeyList:
        return self._run(registry.list_keys_flow(self._core, kind, subject, limit, cursor))

    def revoke(self, registered_key_id: str) -> RegisteredKey:
        return self._run(registry.revoke_flow(self._core, registered_key_id))


class Review(_Api):
    """The release gate and review holds (docs/release-gate.md)."""

    def gate(self) -> dict[str, Any]:
        return self._run(review.gate_flow(self._core))

    def set_gate(self, mode: str, **signals: Any) -> dict[str, Any]:
        """mode `review_only` or `critical_hold`; optional standing_score_min, amount_limit_cents (None: off) and
        first_settlement; a setting left out keeps its value."""
        return self._run(review.set_gate_flow(self._core, mode, **signals))

    def queue(self, state: str | None = None, severity: str | None = None, limit: int | None = None) -> dict[str, Any]:
        return self._run(review.queue_flow(self._core, state, severity, limit))

    def record_event(self, operator_did: str, event_type: str, summary: str, **fields: Any) -> dict[str, Any]:
        """fields: review_outcome, intent_id, signal_code, provider_event_id."""
        return self._run(review.record_event_flow(self._core, operator_did, event_type, summary, **fields))

    def status(self, operator_did: str) -> dict[str, Any]:
        return self._run(review.status_flow(self._core, operator_did))

    def metrics(self, window: str = "24h") -> dict[str, Any]:
        return self._run(review.metrics_flow(self._core, window))

    def resolve(
        self, intent_id: str, resolution: str, note: str | None = None, idempotency_key: str | None = None, released_cents: int | None = None,
    ) -> dict[str, Any]:
        return self._run(review.resolve_flow(self._core, intent_id, resolution, note, idempotency_key, released_cents))


class AuditExports(_Api):
    def create(self, filter: Mapping[str, Any] | None = None, disclosure_tier: str | None = None, retention_hours: int | None = None) -> Any:
        return self._run(audit_exports.create_export_flow(self._core, filter, disclosure_tier, retention_hours))

    def get(self, job_id: str, issue_download: bool = False) -> Any:
        return self._run(audit_exports.get_export_flow(self._core, job_id, issue_download))

    def delete(self, job_id: str) -> Any:
        return self._run(audit_exports.delete_export_flow(self._core, job_id))

    def download(self, job: Mapping[str, Any]) -> bytes:
        """The bundle's ZIP bytes, with the job's download token."""
        return self._run(audit_exports.download_flow(self._core, job))

    @staticmethod
    def verify(zip_bytes: bytes, public_key_hex: str | None = None) -> AuditBundleReport:
        """Offline: see svc_settlement.audit_bundle.verify_audit_bundle."""
        return verify_audit_bundle(zip_bytes, public_key_hex)


class _Session:
    """What both clients hold once the principal is known."""

    def _bind(self, core: ClientCore, principal: dict[str, Any], run: Callable[[Flow[Any]], Any], credential_source: str) -> None:
        self.credential_source: str = credential_source
        """Where the credential came from: `option` (the api_key argument), `environment` (SVC_API_KEY) or
        `stored_login` (what `svc login` kept)."""
        self.tenant_id: str = core.tenant_id
        self.environment: str = core.environment
        self.principal: dict[str, Any] = principal
        self.gateway_base_url: str = core.config.base_url
        self.intents = Intents(core, run)
        self.capabilities = Capabilities(core, run)
        self.spend = Spend(core, run)
        self.policies = Policies(core, run)
        self.ledger = Ledger(core, run)
        self.registry = Registry(core, run)
        self.audit_exports = AuditExports(core, run)
        self.review = Review(core, run)


def _config(
    api_key: str | None, gateway_base_url: str | None, env: Mapping[str, str] | None, refresh_api_key: Callable[[], Any] | None,
    attempts_max: int | None, timeout_seconds: float | None, retry_budget_seconds: float | None, random: Callable[[], float] | None,
    now: Callable[[], float] | None,
) -> tuple[TransportConfig, str]:
    """The transport's configuration, and where its credential came from (docs/sdk-python.md "Credentials")."""
    environment = os.environ if env is None else env
    key, base_url, source = resolve_credential(
        api_key, gateway_base_url, env, now or time.time, lambda chosen: resolve_gateway_base_url(chosen, environment),
    )
    return TransportConfig(
        base_url=base_url,
        api_key=key,
        attempts_max=_positive(attempts_max, ATTEMPTS_MAX_DEFAULT, "attempts_max", ATTEMPTS_MAX_LIMIT, integer=True),
        timeout_seconds=_positive(timeout_seconds, REQUEST_TIMEOUT_SECONDS_DEFAULT, "timeout_seconds"),
        retry_budget_seconds=_positive(retry_budget_seconds, RETRY_BUDGET_SECONDS_DEFAULT, "retry_budget_seconds"),
        refresh_api_key=refresh_api_key,
        random=random or random_module.random,
    ), source


class SvcClient(_Session):
    """The synchronous client. Use as a context manager, or call `close()`."""

    def __init__(self, config: TransportConfig, http: httpx.Client, sleep: Callable[[float], None], agent: AgentIdentity | None,
                 expected_environment: str | None, now: Callable[[], float], credential_source: str = "option"):
        self._http = http
        run = lambda flow: run_sync(flow, http, sleep)  # noqa: E731 - the one way sub-APIs run their flows
        principal = run(_principal_flow(config, expected_environment))
        self._bind(ClientCore(config, principal["tenant_id"], principal["environment"], agent, now), principal, run, credential_source)

    @classmethod
    def open(
        cls, api_key: str | None = None, *, gateway_base_url: str | None = None, env: Mapping[str, str] | None = None,
        expected_environment: str | None = None, refresh_api_key: Callable[[], str] | None = None, agent: AgentIdentity | None = None,
        attempts_max: int | None = None, timeout_seconds: float | None = None, retry_budget_seconds: float | None = None,
        http_client: httpx.Client | None = None, sleep: Callable[[float], None] | None = None, random: Callable[[], float] | None = None,
        now: Callable[[], float] | None = None,
    ) -> "SvcClient":
        """Opens a session: one `GET /v1/auth/principal` (retried per the rules). Refusals → GatewayAuthError."""
        config, source = _config(api_key, gateway_base_url, env, refresh_api_key, attempts_max, timeout_seconds, retry_budget_seconds, random, now)
        http = http_client or httpx.Client(follow_redirects=False)
        try:
            return cls(config, http, sleep or time.sleep, agent, expected_environment, now or time.time, source)
        except BaseException:
            if http_client is None:
                http.close()
            raise

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "SvcClient":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncSvcClient(_Session):
    """The asyncio client: every sub-API method answers an awaitable. Use `async with`, or `await aclose()`."""

    def __init__(self, http: httpx.AsyncClient):
        self._http = http

    @classmethod
    async def open(
        cls, api_key: str | None = None, *, gateway_base_url: str | None = None, env: Mapping[str, str] | None = None,
        expected_environment: str | None = None, refresh_api_key: Callable[[], Any] | None = None, agent: AgentIdentity | None = None,
        attempts_max: int | None = None, timeout_seconds: float | None = None, retry_budget_seconds: float | None = None,
        http_client: httpx.AsyncClient | None = None, sleep: Callable[[float], Any] | None = None, random: Callable[[], float] | None = None,
        now: Callable[[], float] | None = None,
    ) -> "AsyncSvcClient":
        config, source = _config(api_key, gateway_base_url, env, refresh_api_key, attempts_max, timeout_seconds, retry_budget_seconds, random, now)
        http = http_client or httpx.AsyncClient(follow_redirects=False)
        client = cls(http)
        run = lambda flow: run_async(flow, http, sleep or async_sleep)  # noqa: E731 - the one way sub-APIs run their flows
        try:
            principal = await run(_principal_flow(config, expected_environment))
        except BaseException:
            if http_client is None:
                await http.aclose()
            raise
        client._bind(ClientCore(config, principal["tenant_id"], principal["environment"], agent, now or time.time), principal, run, source)
        return client

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncSvcClient":
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
