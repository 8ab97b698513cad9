# Base URL resolution, the same rules as the TypeScript SDK: explicit option > SVC_GATEWAY_URL >
# SVC_GATEWAY_BASE_URL > default; https only, http for loopback; no credentials, query or fragment; no /v1 added.
from __future__ import annotations

import pytest

from svc_settlement import InsecureGatewayUrlError, SvcClient, SvcConfigurationError, is_loopback_host, resolve_gateway_base_url


def test_precedence():
    env = {"SVC_GATEWAY_URL": "https://a.example", "SVC_GATEWAY_BASE_URL": "https://b.example"}
    assert resolve_gateway_base_url("https://explicit.example/", env) == "https://explicit.example"
    assert resolve_gateway_base_url(None, env) == "https://a.example"
    assert resolve_gateway_base_url(" ", {"SVC_GATEWAY_URL": "  ", "SVC_GATEWAY_BASE_URL": "https://b.example"}) == "https://b.example"
    assert resolve_gateway_base_url(None, {}) == "http://127.0.0.1:8080"


@pytest.mark.parametrize(
    ("given", "resolved"),
    [
        ("https://Gateway.Example:443/prefix//", "https://gateway.example/prefix"),
        ("https://gateway.example:8443", "https://gateway.example:8443"),
        ("http://localhost:8080/", "http://localhost:8080"),
        ("http://api.localhost", "http://api.localhost"),
        ("http://127.5.0.1", "http://127.5.0.1"),
        ("http://[::1]:9000", "http://[::1]:9000"),
        ("http://[::ffff:127.0.0.1]", "http://[::ffff:127.0.0.1]"),
        ("https://gateway.example/v1", "https://gateway.example/v1"),
    ],
)
def test_accepted_urls(given, resolved):
    assert resolve_gateway_base_url(given, {}) == resolved


@pytest.mark.parametrize("given", ["http://gateway.example", "http://10.0.0.1", "http://[::2]", "http://localhost.example.com"])
def test_plain_http_is_refused_off_loopback(given):
    with pytest.raises(InsecureGatewayUrlError):
        resolve_gateway_base_url(given, {})


@pytest.mark.parametrize("given", ["gateway.example", "ftp://gateway.example", "https://user:pw@gateway.example", "https://gateway.example/?a=1", "https://gateway.example/#x", "https://"])
def test_malformed_urls_are_configuration_errors(given):
    with pytest.raises(SvcConfigurationError):
        resolve_gateway_base_url(given, {})


def test_loopback_hosts():
    assert is_loopback_host("LOCALHOST") and is_loopback_host("127.0.0.1") and is_loopback_host("::1")
    assert not is_loopback_host("128.0.0.1") and not is_loopback_host("example.com")


@pytest.mark.parametrize(("options", "message"), [({}, "api_key is required"), ({"api_key": "a b"}, "whitespace"), ({"api_key": "k", "attempts_max": 11}, "attempts_max")])
def test_client_options_are_checked_before_anything_is_sent(options, message):
    with pytest.raises(SvcConfigurationError, match=message):
        SvcClient.open(options.pop("api_key", None), env={}, **options)
