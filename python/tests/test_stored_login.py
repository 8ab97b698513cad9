# The credential `svc login` stored, as the Python SDK uses it (the same rules as the TypeScript SDK): only when no
# API key is given (argument, then SVC_API_KEY, then the stored login), with the server it came from, never sent to
# another one, refused when expired or malformed, and not looked for in a given environment that names no folder.
from __future__ import annotations

import asyncio
import json
import os
import pathlib

import pytest

from svc_settlement import AsyncSvcClient, SvcClient, SvcConfigurationError, read_stored_login, stored_login_path


def store_login(config_home: pathlib.Path, content: dict) -> pathlib.Path:
    file = config_home / "svc" / "credentials.json"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(content), encoding="utf-8")
    os.chmod(file, 0o600)
    return file


def api_key_login(server: str, access_token: str, tenant_id: str) -> dict:
    return {"server": server, "credential_type": "api_key", "access_token": access_token, "token_type": "Bearer",
            "tenant_id": tenant_id, "key_id": "key_x", "roles": ["admin"], "expires_at": None}


class RefusingTransport:
    """An httpx transport that records what it would send, so a refusal can be shown to have sent nothing."""

    def __init__(self):
        self.sent = []

    def handle_request(self, request):
        self.sent.append(str(request.url))
        raise AssertionError("nothing should be sent")


def test_paths():
    assert stored_login_path({}) is None
    assert stored_login_path({"HOME": "/home/ann"}) == "/home/ann/.config/svc/credentials.json"
    assert stored_login_path({"HOME": "/home/ann", "XDG_CONFIG_HOME": "/etc/ann"}) == "/etc/ann/svc/credentials.json"
    with pytest.raises(SvcConfigurationError, match=r"api_key is required \(or set SVC_API_KEY, or sign in with `svc login`\)"):
        SvcClient.open(env={})


def test_never_sent_to_another_server(tmp_path):
    import httpx

    store_login(tmp_path, api_key_login("https://svc.example.com", "svc_sk_sandbox_x", "acme"))
    transport = RefusingTransport()
    with pytest.raises(SvcConfigurationError, match="is for https://svc.example.com, not http://127.0.0.1:9"):
        SvcClient.open(env={"XDG_CONFIG_HOME": str(tmp_path), "SVC_GATEWAY_URL": "http://127.0.0.1:9"}, http_client=httpx.Client(transport=transport))
    assert transport.sent == []


def test_expired_and_malformed(tmp_path):
    store_login(tmp_path, {"server": "http://127.0.0.1:9", "credential_type": "session", "access_token": "eyJ.x.y", "token_type": "Bearer",
                           "tenant_id": "acme", "user_id": "usr_x", "roles": ["admin"], "expires_at": "2026-01-01T00:00:00.000Z"})
    with pytest.raises(SvcConfigurationError, match=r"expired at 2026-01-01T00:00:00.000Z: run `svc login` again"):
        SvcClient.open(env={"XDG_CONFIG_HOME": str(tmp_path)})
    file = store_login(tmp_path, {"server": "http://127.0.0.1:9", "token": "x"})
    with pytest.raises(SvcConfigurationError, match=f"The stored login {file} is not one `svc login` wrote"):
        SvcClient.open(env={"XDG_CONFIG_HOME": str(tmp_path)})


def test_used_with_its_server_when_no_key_is_given(live_server, tmp_path):
    store_login(tmp_path, api_key_login(live_server["base_url"], live_server["sandbox_key"], live_server["sandbox_tenant"]))
    assert read_stored_login({"XDG_CONFIG_HOME": str(tmp_path)}).server == live_server["base_url"]
    with SvcClient.open(env={"XDG_CONFIG_HOME": str(tmp_path)}) as client:
        assert (client.credential_source, client.gateway_base_url, client.tenant_id) == ("stored_login", live_server["base_url"], live_server["sandbox_tenant"])

    async def open_async():
        client = await AsyncSvcClient.open(env={"XDG_CONFIG_HOME": str(tmp_path)})
        await client.aclose()
        return client.credential_source, client.tenant_id

    assert asyncio.run(open_async()) == ("stored_login", live_server["sandbox_tenant"])


def test_comes_after_the_argument_and_the_environment(live_server, tmp_path):
    store_login(tmp_path, api_key_login(live_server["base_url"], live_server["sandbox_key"], live_server["sandbox_tenant"]))
    environment = {"XDG_CONFIG_HOME": str(tmp_path), "SVC_API_KEY": live_server["live_key"], "SVC_GATEWAY_URL": live_server["base_url"]}
    with SvcClient.open(env=environment) as client:
        assert (client.credential_source, client.tenant_id) == ("environment", live_server["live_tenant"])
    with SvcClient.open(live_server["live_key"], env={**environment, "SVC_API_KEY": "svc_sk_sandbox_not_this_one"}) as client:
        assert (client.credential_source, client.tenant_id) == ("option", live_server["live_tenant"])
