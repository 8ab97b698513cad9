# Audit-export flows (/v1/compliance/audit-exports): create a job (its bundle is built at once), read and delete
# jobs, download the bundle with the job's download token, and verify it offline (audit_bundle.py).
from __future__ import annotations

import re
from typing import Any, Mapping

from .core import ClientCore
from .errors import SvcArgumentError, SvcResponseError
from .transport import Flow, RequestSpec, request_flow

_JOB_ID = re.compile(r"^job_[0-9a-f]{32}$")
_DOWNLOAD_PATH = re.compile(r"^/v1/compliance/audit-exports/job_[0-9a-f]{32}/bundle$")


def _job_path(job_id: str) -> str:
    if not isinstance(job_id, str) or not _JOB_ID.match(job_id):
        raise SvcArgumentError("An audit export job id is job_ and 32 hex digits.")
    return f"/v1/compliance/audit-exports/{job_id}"


def create_export_flow(
    core: ClientCore, filter: Mapping[str, Any] | None = None, disclosure_tier: str | None = None, retention_hours: int | None = None,
) -> Flow[dict[str, Any]]:
    """Creates a job; the answer carries `download_token` and `download_path`. The route honours no idempotency key,
    so it is not retried on a 5xx or a network failure: list the jobs before trying again."""
    body: dict[str, Any] = {}
    if filter is not None:
        body["filter"] = dict(filter)
    if disclosure_tier is not None:
        body["disclosure_tier"] = disclosure_tier
    if retention_hours is not None:
        body["retention_hours"] = retention_hours
    answer, _ = yield from core.post("/v1/compliance/audit-exports", body, False)
    return answer


def get_export_flow(core: ClientCore, job_id: str, issue_download: bool = False) -> Flow[dict[str, Any]]:
    answer, _ = yield from core.get(_job_path(job_id), {"issue_download": "1" if issue_download else None})
    return answer


def delete_export_flow(core: ClientCore, job_id: str) -> Flow[dict[str, Any]]:
    answer, _ = yield from core.delete(_job_path(job_id))
    return answer


def download_flow(core: ClientCore, job: Mapping[str, Any]) -> Flow[bytes]:
    """The bundle's ZIP bytes. The route takes the job's download token, not the API key, and no `x-tenant-id`:
    the token names the tenant. Downloading again is harmless, so it is retried like a GET."""
    token, path = job.get("download_token"), job.get("download_path")
    if not isinstance(token, str) or not isinstance(path, str) or not _DOWNLOAD_PATH.match(path):
        raise SvcArgumentError("The job has no download_token and download_path; read it with issue_download=True.")
    response = yield from request_flow(core.config, RequestSpec("POST", path, True, bearer_token=token, headers={"accept": "application/zip"}))
    if not response.content.startswith(b"PK"):
        raise SvcResponseError(f"The answer from {response.url} is not a ZIP.", response.url, response.status, response.body_text[:200])
    return response.content
