# The credential `svc login` keeps (docs/sign-in.md#device-login), read by the same rules as the TypeScript SDK: a
# client given no API key (no argument, no SVC_API_KEY) uses the stored login, with the server it was obtained from,
# and never sends it to another server.
from __future__ import annotations

import json
import os
import pathlib
import sys
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Mapping

from .errors import SvcConfigurationError


@dataclass(frozen=True)
class StoredLogin:
    file: str
    server: str
    """The gateway base URL the credential was obtained from (and may only be sent to)."""
    credential_type: str
    """`session` or `api_key`."""
    access_token: str
    tenant_id: str
    expires_at: datetime | None
    """A session's end; None for an API key, which lasts until revoked."""


def _present(value: str | None) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() != "" else None


def stored_login_path(env: Mapping[str, str] | None = None) -> str | None:
    """`$XDG_CONFIG_HOME/svc/credentials.json`, else `%APPDATA%\\svc\\credentials.json` on Windows, else
    `$HOME/.config/svc/credentials.json`. An environment given in place of the process's is read alone (no home folder
    of the user's own is looked up); None when it names no folder."""
    environment = os.environ if env is None else env
    home = _present(environment.get("HOME")) or (str(pathlib.Path.home()) if env is None else None)
    config_dir = (
        _present(environment.get("XDG_CONFIG_HOME"))
        or (_present(environment.get("APPDATA")) if sys.platform == "win32" else None)
        or (os.path.join(home, ".config") if home else None)
    )
    return None if config_dir is None else os.path.join(config_dir, "svc", "credentials.json")


def read_stored_login(env: Mapping[str, str] | None = None) -> StoredLogin | None:
    """The stored login, or None when there is no file. A file that is there but unreadable or malformed raises
    SvcConfigurationError naming it, rather than a silent fall back to no credential."""
    file = stored_login_path(env)
    if file is None:
        return None
    try:
        text = pathlib.Path(file).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SvcConfigurationError(f"The stored login {file} cannot be read: {error}") from None
    malformed = SvcConfigurationError(f"The stored login {file} is not one `svc login` wrote; run `svc login` again.")
    try:
        content = json.loads(text)
    except ValueError:
        raise malformed from None
    if not isinstance(content, dict):
        raise malformed
    server, credential_type, access_token, tenant_id = (content.get(name) for name in ("server", "credential_type", "access_token", "tenant_id"))
    if not isinstance(server, str) or not isinstance(access_token, str) or access_token == "" or not isinstance(tenant_id, str):
        raise malformed
    if credential_type not in ("session", "api_key"):
        raise malformed
    expires_at = content.get("expires_at")
    expiry = None
    if isinstance(expires_at, str):
        try:
            expiry = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
        except ValueError:
            raise malformed from None
    return StoredLogin(file, server, credential_type, access_token, tenant_id, expiry)


def resolve_credential(
    api_key: str | None, gateway_base_url: str | None, env: Mapping[str, str] | None, now: Callable[[], float],
    resolve_base_url: Callable[[str | None], str],
) -> tuple[str, str, str]:
    """(api_key, base_url, source): the argument, else SVC_API_KEY, else the stored login with its server (used when
    no base URL is given, refused when the given one is another). Source is `option`, `environment` or `stored_login`."""
    environment = os.environ if env is None else env
    given = api_key if api_key is not None else environment.get("SVC_API_KEY")
    if isinstance(given, str) and given.strip() != "":
        return _checked(given), resolve_base_url(gateway_base_url), "option" if api_key is not None else "environment"
    stored = read_stored_login(env)
    if stored is None:
        raise SvcConfigurationError("api_key is required (or set SVC_API_KEY, or sign in with `svc login`).")
    stored_server = resolve_base_url(stored.server)
    explicit = any(_present(value) for value in (gateway_base_url, environment.get("SVC_GATEWAY_URL"), environment.get("SVC_GATEWAY_BASE_URL")))
    base_url = resolve_base_url(gateway_base_url) if explicit else stored_server
    if base_url != stored_server:
        raise SvcConfigurationError(
            f"No API key given, and the stored login ({stored.file}) is for {stored_server}, not {base_url}: "
            f"pass api_key, set SVC_API_KEY, or run `svc login --server {base_url}`."
        )
    if stored.expires_at is not None and stored.expires_at.timestamp() <= now():
        expired = stored.expires_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        raise SvcConfigurationError(f"The stored login ({stored.file}) expired at {expired}: run `svc login` again, or pass api_key.")
    return _checked(stored.access_token), base_url, "stored_login"


def _checked(api_key: str) -> str:
    if any(character.isspace() for character in api_key.strip()):
        raise SvcConfigurationError("api_key must not contain whitespace.")
    return api_key.strip()
