# Shared fixtures: where the repository's test vectors live, and the live server the vitest wrapper
# (test/python/sdk.test.ts) started for this run, when there is one.
from __future__ import annotations

import json
import os
import pathlib

import pytest

REPOSITORY_ROOT = pathlib.Path(__file__).resolve().parents[2]
VECTORS = REPOSITORY_ROOT / "test" / "vectors"


def load_vectors(name: str):
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def live_server() -> dict[str, str]:
    """The server the wrapper started, with a fresh sandbox tenant's admin key. Skipped when run by hand without one."""
    base_url = os.environ.get("SVC_TEST_GATEWAY_URL")
    if not base_url:
        pytest.skip("no live server: run through `npx vitest run test/python/sdk.test.ts`")
    return {
        "base_url": base_url,
        "sandbox_key": os.environ["SVC_TEST_SANDBOX_API_KEY"],
        "sandbox_tenant": os.environ["SVC_TEST_SANDBOX_TENANT_ID"],
        "live_key": os.environ["SVC_TEST_LIVE_API_KEY"],
        "live_tenant": os.environ["SVC_TEST_LIVE_TENANT_ID"],
    }
