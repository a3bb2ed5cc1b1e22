"""Large-message handling: TiCDC's claim-check files on ``file://`` storage, written and read back.

The claim-check file is named ``<uuid4>.json`` and holds ``{"key": null, "value": "<base64>"}`` (the full
message), or the raw message bytes with ``claim-check-raw-value``. Readers use only the base name of the
``claimCheckLocation`` and look it up under their own configured storage root, so a location can never
point outside that root.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlparse

import orjson

from cdc_canal.names import PROTOCOL
from cdc_core.errors import ConfigError, LimitExceededError, StorageError

MAX_CLAIM_BYTES: Final = 256 * 1024 * 1024  # a claim-check file larger than this is refused, not read


def storage_root(uri: str, option: str = "claim-check-storage-uri") -> Path:
    """The local directory of a ``file://`` storage URI."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise ConfigError(f"{PROTOCOL}: option {option}: only file:// storage is supported here, got {uri!r}")
    if parsed.netloc not in ("", "localhost"):
        raise ConfigError(f"{PROTOCOL}: option {option}: file:// URI with a host is not local: {uri!r}")
    return Path(unquote(parsed.path))


def claim_name(location: str) -> str:
    """The file name a location refers to: its last path segment, which must be a plain name."""
    name = location.rstrip("/").rsplit("/", 1)[-1]
    if name in ("", ".", "..") or "\\" in name or "\x00" in name:
        raise ValueError(f"claimCheckLocation {location!r} names no file")
    return name


def write_claim(root: Path, uri: str, value: bytes, *, raw: bool) -> str:
    """Store a full message; returns its location (storage URI without trailing slash + file name)."""
    name = f"{uuid.uuid4()}.json"
    body = value if raw else orjson.dumps({"key": None, "value": base64.b64encode(value).decode("ascii")})
    try:
        root.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(body)
    except OSError as exc:
        raise StorageError(f"{PROTOCOL}: cannot write claim-check file {name} under {root}: {exc}") from exc
    return f"{uri.rstrip('/')}/{name}"


def read_claim(root: Path, location: str, *, raw: bool) -> bytes:
    """The full message a claim-check location refers to (raises StorageError, LimitExceededError, ValueError)."""
    path = root / claim_name(location)
    try:
        size = path.stat().st_size
        if size > MAX_CLAIM_BYTES:
            raise LimitExceededError(f"{PROTOCOL}: claim-check file {path.name} has {size} bytes (> {MAX_CLAIM_BYTES})")
        body = path.read_bytes()
    except OSError as exc:
        raise StorageError(f"{PROTOCOL}: cannot read claim-check file {path.name} under {root}: {exc}") from exc
    if raw:
        return body
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"claim-check file {path.name} is not JSON: {exc}") from exc
    value = document.get("value") if isinstance(document, dict) else None
    if not isinstance(value, str):
        raise ValueError(f"claim-check file {path.name} has no base64 value")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"claim-check file {path.name}: value is not base64: {exc}") from exc
