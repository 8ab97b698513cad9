# Policy flows: the managed templates, preview and dry-run test of a rule, drafting immutable versions, rolling one
# out as the head, and reading versions (what a v7 intent binds to). Drafts and rollouts honour no idempotency key,
# so they are never retried on a 5xx or a network failure: read `versions()` before trying again.
from __future__ import annotations

from typing import Any, Mapping

from .core import ClientCore
from .defaults import POLICY_VERSION_PAGES_MAX
from .errors import SvcNotFoundError, SvcResponseError
from .transport import Flow


def templates_flow(core: ClientCore) -> Flow[list[dict[str, Any]]]:
    body, response = yield from core.get("/harbor/policy/v1/templates")
    if not isinstance(body.get("templates"), list):
        raise SvcResponseError("The template list has no templates array.", response.url, response.status, response.body_text)
    return body["templates"]


def preview_flow(core: ClientCore, template_id: str, parameters: Mapping[str, Any] | None = None) -> Flow[dict[str, Any]]:
    """Pure on the server, so retried like a GET."""
    body, _ = yield from core.post("/harbor/policy/v1/preview", {"template_id": template_id, "parameters": dict(parameters or {})}, True)
    return body


def dry_run_flow(
    core: ClientCore, *, evidence: Any, template_id: str | None = None, parameters: Mapping[str, Any] | None = None,
    predicate_dsl: Mapping[str, Any] | None = None, evidence_schema: Mapping[str, Any] | None = None, amount_cents: int | None = None,
) -> Flow[dict[str, Any]]:
    """Evaluates a rule against sample evidence without creating anything. Pure, so retried like a GET."""
    request: dict[str, Any] = {}
    if template_id is not None:
        request.update(template_id=template_id, parameters=dict(parameters or {}))
    if predicate_dsl is not None:
        request["predicate_dsl"] = dict(predicate_dsl)
    request["evidence"] = evidence
    if evidence_schema is not None:
        request["evidence_schema"] = dict(evidence_schema)
    if amount_cents is not None:
        request["amount_cents"] = amount_cents
    body, _ = yield from core.post("/harbor/policy/v1/test", request, True)
    return body


def draft_flow(core: ClientCore, template_id: str, parameters: Mapping[str, Any] | None = None) -> Flow[dict[str, Any]]:
    body, _ = yield from core.post("/harbor/policy/v1/drafts", {"template_id": template_id, "parameters": dict(parameters or {})}, False)
    return body


def rollout_flow(core: ClientCore, template_id: str, version_seq: int, expected_head_digest: str | None = None) -> Flow[dict[str, Any]]:
    request: dict[str, Any] = {"template_id": template_id, "version_seq": version_seq}
    if expected_head_digest is not None:
        request["expected_head_digest"] = expected_head_digest
    body, _ = yield from core.post("/harbor/policy/v1/rollout", request, False)
    return body


def versions_flow(core: ClientCore, template_id: str, limit: int | None = None, cursor: int | None = None) -> Flow[dict[str, Any]]:
    body, response = yield from core.get("/harbor/policy/v1/versions", {"template_id": template_id, "limit": limit, "cursor": cursor})
    if not isinstance(body.get("versions"), list):
        raise SvcResponseError("The version list has no versions array.", response.url, response.status, response.body_text)
    return body


def publish_flow(core: ClientCore, template_id: str, parameters: Mapping[str, Any] | None = None) -> Flow[dict[str, Any]]:
    """Drafts a version and rolls it out, guarded by the head read just before. Answers the new head version."""
    before = yield from versions_flow(core, template_id, limit=1)
    drafted = yield from draft_flow(core, template_id, parameters)
    yield from rollout_flow(core, template_id, drafted["version_seq"], before.get("current_head_digest"))
    return {**drafted, "is_head": True}


def policy_version_flow(core: ClientCore, template_id: str, version_seq: int | None = None) -> Flow[dict[str, Any]]:
    """A version by number, or the head when `version_seq` is None; SvcNotFoundError when absent."""
    cursor = None
    for _ in range(POLICY_VERSION_PAGES_MAX):
        page = yield from versions_flow(core, template_id, cursor=cursor)
        wanted = page.get("current_head_seq") if version_seq is None else version_seq
        if wanted is None:
            break
        for version in page["versions"]:
            if version.get("version_seq") == wanted:
                return version
        if not page.get("has_more") or page.get("next_cursor") is None:
            break
        cursor = page["next_cursor"]
    what = "no head" if version_seq is None else f"no version {version_seq}"
    raise SvcNotFoundError(
        404, f"{core.config.base_url}/harbor/policy/v1/versions", "", code="policy.version_not_found",
        message=f"The tenant's policy {template_id} has {what}.", details={"template_id": template_id},
    )
