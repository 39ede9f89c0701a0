"""The tenant directory (rules.md 11): which brands one deployment serves, and where.

CASINO_TENANTS is JSON, or the path of a file holding it:

    {"tenants": {"brand_a": {"database_url": "postgresql://casino@db1/casino",
                             "postgres_schema": "brand_a",
                             "api_keys": {"service": "...", "operator": "...", "auditor": "..."},
                             "seal_key": "...", "secret_key": "...", "witness": "..."}}}

Each tenant is the process's settings with its entry's values in place of the store,
the keys and the witness: a `Settings` of its own, so every part of the service that
reads settings (the store, the seal, the witness, the workers) works on one tenant
without knowing there are others. Without CASINO_TENANTS there is one tenant,
`default`, configured as before.

Refused at start-up, in one line naming the tenant: an entry that is not of that
shape, two tenants sharing an API key, a seal key, a secret key, a witness or a
store (one schema of one database, or one SQLite file), and, with tenants, a
tenant without its own seal key, secret key or witness. The development keys
(`dev-service` ...) reach the tenant `default` if there is one, outside production.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.config import DEV_KEYS, ROLES, ConfigError, Settings, load_settings, parse_api_keys

DEFAULT = "default"
# A tenant's name: its default schema on PostgreSQL, a label in metrics and logs.
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
TENANTS_MAX = 1000  # each has its pools, workers and threads: far fewer fit one process
DIRECTORY_BYTES_MAX = 1_000_000
ENTRY_FIELDS = frozenset(
    ("database_url", "postgres_schema", "database_owner_url", "api_keys", "seal_key",
     "secret_key", "witness", "fenced")
)  # fmt: skip
NOT_SETTINGS = frozenset(("api_keys", "fenced"))
OWN = ("seal_key", "secret_key", "witness")  # every tenant's own, never shared


@dataclass(frozen=True)
class Tenant:
    name: str
    settings: Settings
    # Its commands refused while it moves (infra/tenant_move.py): set in the directory.
    fenced: bool = False

    @property
    def location(self) -> str:
        """Where its store is, without a password: the URL and, on PostgreSQL, the schema."""
        from infra.store.reach import shown_url

        shown = shown_url(self.settings.database_url)
        return f"{shown} schema {self.settings.postgres_schema}" if self.on_postgres else shown

    @property
    def on_postgres(self) -> bool:
        return self.settings.on_postgres


def load_tenants(base: Settings | None = None) -> dict[str, Tenant]:
    """Every tenant, by name, in the order the directory lists them; or ConfigError."""
    base = base or load_settings()
    if not base.tenants.strip():
        return {DEFAULT: Tenant(DEFAULT, base)}
    entries = _entries(base.tenants)
    tenants = {
        name: Tenant(name, _settings(base, name, entry), fenced=entry.get("fenced") is True)
        for name, entry in entries.items()
    }
    _refuse_shared(tenants)
    return tenants


def tenant_settings(base: Settings, name: str) -> Settings:
    """One tenant's settings (`casino --tenant NAME`), or ConfigError naming the choices."""
    tenants = load_tenants(base)
    if name not in tenants:
        raise ConfigError(
            f"--tenant: no tenant {name!r} (name one with --tenant NAME); the tenants are "
            f"{', '.join(tenants)}"
        )
    return tenants[name].settings


def _entries(text: str) -> dict[str, dict[str, Any]]:
    source = text.strip()
    if not source.startswith("{"):
        path = Path(source)
        if not path.is_file():
            raise ConfigError(f"CASINO_TENANTS: neither JSON nor a file: {source[:200]}")
        source = path.read_text()[:DIRECTORY_BYTES_MAX]
    try:
        raw = json.loads(source)
    except ValueError as error:
        raise ConfigError(f"CASINO_TENANTS: not JSON: {error}") from None
    tenants = raw.get("tenants") if isinstance(raw, dict) else None
    if not isinstance(tenants, dict) or not tenants:
        raise ConfigError('CASINO_TENANTS: must be {"tenants": {"NAME": {...}, ...}}')
    if len(tenants) > TENANTS_MAX:
        raise ConfigError(f"CASINO_TENANTS: more than {TENANTS_MAX} tenants")
    for name, entry in tenants.items():
        if not NAME_PATTERN.fullmatch(name):
            pattern = NAME_PATTERN.pattern
            raise ConfigError(f"CASINO_TENANTS: {name[:50]!r} is not a name like {pattern}")
        if not isinstance(entry, dict) or not isinstance(entry.get("database_url"), str):
            raise ConfigError(f"CASINO_TENANTS: tenant {name}: needs at least a database_url")
        unknown = set(entry) - ENTRY_FIELDS
        if unknown:
            raise _refused(name, f"unknown {', '.join(sorted(unknown))}")
    return tenants


def _settings(base: Settings, name: str, entry: dict[str, Any]) -> Settings:
    keys = entry.get("api_keys") or {}
    if not isinstance(keys, dict) or not set(keys) <= set(ROLES):
        raise ConfigError(
            f"CASINO_TENANTS: tenant {name}: api_keys maps {', '.join(ROLES)} to keys"
        )
    for role, key in keys.items():
        if not isinstance(key, str) or not key.strip() or "," in key or "=" in key:
            raise ConfigError(f"CASINO_TENANTS: tenant {name}: the {role} key is not a plain key")
    if not keys and name != DEFAULT:  # else the development keys would stand in
        raise _refused(name, "needs api_keys of its own")
    missing = [field for field in OWN if not str(entry.get(field) or "").strip()]
    if missing:
        raise ConfigError(
            f"CASINO_TENANTS: tenant {name}: needs its own {', '.join(missing)} "
            "(`casino keys new`, `casino keys secret`; a witness of its own)"
        )
    with_dev_keys = name == DEFAULT and base.env != "production"
    listed = ",".join(f"{role}={key.strip()}" for role, key in keys.items())
    if with_dev_keys:  # the development keys reach the tenant `default`, and only it
        listed = ",".join(filter(None, [listed, *(f"{r}={k}" for k, r in DEV_KEYS.items())]))
    update = {
        **{field: entry[field] for field in ENTRY_FIELDS - NOT_SETTINGS if field in entry},
        "postgres_schema": entry.get("postgres_schema") or name,
        "api_keys": listed,
        "tenants": "",
    }
    fields = {**base.model_dump(), **update}
    try:
        return load_settings(**fields)
    except ConfigError as error:
        raise ConfigError(f"CASINO_TENANTS: tenant {name}: {error}") from None


def _refuse_shared(tenants: dict[str, Tenant]) -> None:
    """Two tenants with one API key, seal key, secret key, witness or store: refused."""
    seen: dict[tuple[str, str], str] = {}
    for name, tenant in tenants.items():
        s = tenant.settings
        owned = [("an API key", key) for key in parse_api_keys(s.api_keys)]
        owned += [
            ("a seal key", s.seal_key.strip()),
            ("a secret key", s.secret_key.strip().lower()),
            ("a witness", s.witness.strip()),
            ("a store", _store_of(s)),
        ]
        if s.env == "production":
            dev = [key for what, key in owned if what == "an API key" and key in DEV_KEYS]
            if dev:
                raise _refused(name, "production refuses the dev-* keys")
        for what, value in owned:
            other = seen.setdefault((what, value), name)
            if other != name:
                raise ConfigError(
                    f"CASINO_TENANTS: tenants {other} and {name} share {what}: each needs its own"
                )


def _refused(tenant: str, problem: str) -> ConfigError:
    return ConfigError(f"CASINO_TENANTS: tenant {tenant}: {problem}")


def _store_of(settings: Settings) -> str:
    url = settings.database_url.replace("postgres://", "postgresql://", 1)
    return f"{url}#{settings.postgres_schema}" if settings.on_postgres else url
