# What every sub-API shares once a session is open: the transport configuration, the tenant scope resolved from the
# credential, the optional agent key for recognition proofs, idempotency keys, and the echo checks on answers.
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .canonical_json import compact_json
from .defaults import IDEMPOTENCY_KEY_LENGTH_MAX
from .errors import SvcArgumentError, SvcResponseError, TenantBindingError
from .keys import SvcSigningKey
from .recognition import RECOGNITION_PROOF_HEADER_NAME, RECOGNITION_VERIFIER_ID_DEFAULT, create_recognition_proof
from .transport import Flow, RequestSpec, Response, TransportConfig, request_flow

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_IDEMPOTENCY_KEY = re.compile(r"^[\x20-\x7e]+$")


@dataclass(frozen=True)
class AgentIdentity:
    """An agent's recognition-proof key. Live tenants require a proof on every engine mutation; sandbox tenants
    check one when it is sent. The public key must be registered under `key_id` (kind `agent`)."""

    key_id: str
    key: SvcSigningKey
    verifier_id: str = RECOGNITION_VERIFIER_ID_DEFAULT


def intent_path(intent_id: str, suffix: str = "") -> str:
    """An intent id as a path segment: it must be a UUID, so it needs no encoding and a proof can bind it as is."""
    if not isinstance(intent_id, str) or not _UUID.match(intent_id):
        raise SvcArgumentError(f"intent_id must be a UUID, got {intent_id!r}.")
    return f"/harbor/intents/{intent_id}{suffix}"


def check_uuid(value: str, name: str) -> str:
    if not isinstance(value, str) or not _UUID.match(value):
        raise SvcArgumentError(f"{name} must be a UUID, got {value!r}.")
    return value


def check_idempotency_key(key: str | None) -> str:
    """The caller's key, or a fresh UUID: 1 to 256 printable ASCII characters."""
    chosen = str(uuid.uuid4()) if key is None else key
    if not isinstance(chosen, str) or not 1 <= len(chosen) <= IDEMPOTENCY_KEY_LENGTH_MAX or not _IDEMPOTENCY_KEY.match(chosen):
        raise SvcArgumentError(f"An idempotency key is 1 to {IDEMPOTENCY_KEY_LENGTH_MAX} printable ASCII characters.")
    return chosen


class ClientCore:
    def __init__(self, config: TransportConfig, tenant_id: str, environment: str, agent: AgentIdentity | None, now: Callable[[], float]):
        self.config = config
        self.tenant_id = tenant_id
        self.environment = environment
        self.agent = agent
        # Wall-clock seconds, for recognition proofs and evidence timestamps.
        self.now = now

    def _tenant_headers(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        # `x-tenant-id` echoes the tenant the credential resolved to; it is not authorization.
        return {"x-tenant-id": self.tenant_id, **(extra or {})}

    def get(self, path: str, query: Mapping[str, Any] | None = None) -> Flow[tuple[dict[str, Any], Response]]:
        response = yield from request_flow(self.config, RequestSpec("GET", path, True, query=query, headers=self._tenant_headers()))
        return response.json_object(), response

    def delete(self, path: str) -> Flow[tuple[dict[str, Any], Response]]:
        response = yield from request_flow(self.config, RequestSpec("DELETE", path, True, headers=self._tenant_headers()))
        return response.json_object(), response

    def post(self, path: str, body: Any, retry_safe: bool, headers: Mapping[str, str] | None = None) -> Flow[tuple[dict[str, Any], Response]]:
        """A POST on a tenant-bound route that is not an engine mutation. `retry_safe` only when repeating it cannot
        do anything twice (a pure computation, or a route that honours an idempotency key that is sent)."""
        spec = RequestSpec("POST", path, retry_safe, body_text=compact_json(body), headers=self._tenant_headers(headers))
        response = yield from request_flow(self.config, spec)
        return response.json_object(), response

    def mutate(
        self, path: str, purpose: str, body: Any, idempotency_key: str | None,
        headers: Mapping[str, str] | None = None, expect_statuses: tuple[int, ...] = (),
    ) -> Flow[Response]:
        """One of the four engine mutations: an idempotency key and, with an agent key, a recognition proof over
        the exact body bytes. Both are fixed before the first attempt, so every retry re-sends the same bytes."""
        body_text = compact_json(body)
        all_headers = self._tenant_headers({"idempotency-key": check_idempotency_key(idempotency_key), **self.proof_header(purpose, path, body_text)})
        all_headers.update(headers or {})
        return (yield from request_flow(self.config, RequestSpec("POST", path, True, body_text=body_text, headers=all_headers, expect_statuses=expect_statuses)))

    def proof_header(self, purpose: str, path: str, body_text: str) -> dict[str, str]:
        if self.agent is None:
            return {}
        _, header = create_recognition_proof(
            key=self.agent.key, key_id=self.agent.key_id, purpose=purpose, tenant_id=self.tenant_id, verifier_id=self.agent.verifier_id,
            method="POST", path=path, body=body_text.encode("utf-8"), now_seconds=self.now(),
        )
        return {RECOGNITION_PROOF_HEADER_NAME: header}

    def check_echo(self, body: Mapping[str, Any], response: Response, intent_id: str | None = None) -> None:
        """An answer must name this tenant (`tenant`, or `tenant_id`) and, when one was asked about, this intent."""
        tenant = body.get("tenant") if isinstance(body.get("tenant"), str) else body.get("tenant_id")
        if tenant != self.tenant_id:
            raise TenantBindingError(f"The answer names tenant {tenant!r}, not {self.tenant_id}.", response.url, response.status, response.body_text)
        if intent_id is not None:
            echoed = body.get("intent_id")
            if not isinstance(echoed, str) or echoed.lower() != intent_id.lower():
                raise TenantBindingError(f"The answer names intent {echoed!r}, not {intent_id}.", response.url, response.status, response.body_text)

    def require_fields(self, body: Mapping[str, Any], response: Response, fields: Mapping[str, type | tuple[type, ...]]) -> None:
        """Asserts the answer has the fields the SDK reads, with their JSON types."""
        for name, expected in fields.items():
            value = body.get(name)
            wrong_bool = isinstance(value, bool) and expected in (int, (int, float))
            if not isinstance(value, expected) or wrong_bool:
                raise SvcResponseError(f"The answer from {response.url} lacks {name}.", response.url, response.status, response.body_text)
