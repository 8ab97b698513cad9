# The gateway base URL: the explicit option, else SVC_GATEWAY_URL, else SVC_GATEWAY_BASE_URL, else the self-hosted
# default. https unless the host is loopback; never a `/v1` appended.
from __future__ import annotations

import ipaddress
import os
from typing import Mapping
from urllib.parse import urlsplit

from .defaults import GATEWAY_BASE_URL_DEFAULT
from .errors import InsecureGatewayUrlError, SvcConfigurationError

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _present(value: str | None) -> str | None:
    """Blank values count as unset, so an exported-but-empty variable does not hide the next source."""
    return value.strip() if isinstance(value, str) and value.strip() != "" else None


def resolve_gateway_base_url(gateway_base_url: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The base URL to call, without a trailing slash. InsecureGatewayUrlError for http on a non-loopback host,
    SvcConfigurationError for anything that is not an absolute http(s) URL without credentials, query or fragment."""
    environment = os.environ if env is None else env
    chosen = (
        _present(gateway_base_url)
        or _present(environment.get("SVC_GATEWAY_URL"))
        or _present(environment.get("SVC_GATEWAY_BASE_URL"))
        or GATEWAY_BASE_URL_DEFAULT
    )
    try:
        parts = urlsplit(chosen)
        hostname, port = parts.hostname, parts.port
    except ValueError:
        raise SvcConfigurationError(f"The gateway base URL is not an absolute URL: {chosen}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise SvcConfigurationError(f"The gateway base URL must be http(s): {chosen}")
    if not hostname:
        raise SvcConfigurationError(f"The gateway base URL is not an absolute URL: {chosen}")
    if parts.username is not None or parts.password is not None:
        raise SvcConfigurationError("The gateway base URL must not carry credentials; pass api_key.")
    if parts.query or parts.fragment or chosen.rstrip().endswith(("?", "#")):
        raise SvcConfigurationError(f"The gateway base URL must not have a query or fragment: {chosen}")
    if scheme == "http" and not is_loopback_host(hostname):
        raise InsecureGatewayUrlError(chosen)
    host = f"[{hostname}]" if ":" in hostname else hostname
    port_text = "" if port is None or port == _DEFAULT_PORTS[scheme] else f":{port}"
    return f"{scheme}://{host}{port_text}{parts.path.rstrip('/')}"


def is_loopback_host(hostname: str) -> bool:
    """`localhost` (and `*.localhost`, RFC 6761), 127.0.0.0/8 and ::1 (also IPv4-mapped)."""
    host = hostname.lower().strip("[]")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback
