"""Claim-check storage: where TiCDC puts messages too large for Kafka, and where decoders fetch them back.

The encoder writes the full (already compressed) message to ``<storage>/<uuid4>.json``, as the JSON wrapper
``{"key": <base64|null>, "value": <base64>}`` unless ``claim-check-raw-value`` is set, and sends a reduced message
carrying the location. A decoder takes the location's **base name** only and reads it from its own configured
storage, so a location can never make it read outside that root (path traversal is refused, not resolved).
``file://`` storage is built in; other schemes (s3://, gs://, az://, ...) go through the optional fsspec extra.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlparse

import attrs

from cdc_core.errors import ConfigError, LimitExceededError, StorageError, StorageUnavailableError

MAX_CLAIM_BYTES: Final = 256 * 1024 * 1024
_SAFE_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")


def base_name(location: str) -> str:
    """The file name a location points at; refuses anything that is not a plain file name."""
    name = location.rstrip("/").rsplit("/", 1)[-1]
    if not _SAFE_NAME.fullmatch(name) or name in (".", ".."):
        raise StorageError(f"claim-check location {location!r} does not end in a plain file name")
    return name


def wrap(key: bytes | None, value: bytes) -> bytes:
    """The JSON wrapper TiCDC writes (Go's []byte JSON: standard base64 with padding)."""
    document = {
        "key": None if key is None else base64.b64encode(key).decode(),
        "value": base64.b64encode(value).decode(),
    }
    return json.dumps(document, separators=(",", ":")).encode()


def unwrap(content: bytes, *, location: str) -> tuple[bytes | None, bytes]:
    try:
        document = json.loads(content)
        key = document["key"]
        value = document["value"]
        return (None if key is None else base64.b64decode(key, validate=True)), base64.b64decode(value, validate=True)
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise StorageError(f"claim-check file {location!r} is not a {{key, value}} JSON wrapper: {exc}") from exc


@attrs.frozen
class ClaimCheckStorage:
    """One storage root, given as TiCDC's ``claim-check-storage-uri``."""

    uri: str
    raw_value: bool = False
    max_bytes: int = MAX_CLAIM_BYTES  # a larger file is refused before it is read

    def __attrs_post_init__(self) -> None:
        if not self.uri:
            raise ConfigError("claim-check-storage-uri is required to read or write claim-check messages")

    @property
    def _scheme(self) -> str:
        return urlparse(self.uri).scheme or "file"

    def _local_root(self) -> Path:
        parsed = urlparse(self.uri)
        return Path(parsed.path if parsed.scheme else self.uri)

    def _fs(self) -> tuple[Any, str]:
        try:
            import fsspec
        except ImportError as exc:
            raise ConfigError(
                f"claim-check storage {self._scheme}:// needs the fsspec extra: pip install 'cdc-core[fsspec]'"
            ) from exc
        fs, root = fsspec.core.url_to_fs(self.uri)
        return fs, str(root).rstrip("/")

    def read_bytes(self, location: str) -> bytes:
        name = base_name(location)
        try:
            if self._scheme == "file":
                path = self._local_root() / name
                self._check_size(name, path.stat().st_size)
                return path.read_bytes()
            fs, root = self._fs()
            self._check_size(name, int(fs.size(f"{root}/{name}")))
            data: bytes = fs.cat_file(f"{root}/{name}")
            return data
        except FileNotFoundError as exc:  # the message names a file the store does not hold: the data's fault
            raise StorageError(f"claim-check file {name!r} is not in {self._scheme} storage: {exc}") from exc
        except OSError as exc:  # the store itself failed: not the message's fault, never a dead letter
            raise StorageUnavailableError(
                f"claim-check file {name!r} cannot be read from {self._scheme} storage: {exc}"
            ) from exc

    def _check_size(self, name: str, size: int) -> None:
        if size > self.max_bytes:
            raise LimitExceededError(f"claim-check file {name!r} has {size} bytes, over the {self.max_bytes} allowed")

    def read(self, location: str) -> tuple[bytes | None, bytes]:
        """(key, value) of the message stored at ``location`` (key is None for raw values and Simple/Canal)."""
        content = self.read_bytes(location)
        return (None, content) if self.raw_value else unwrap(content, location=location)

    def write(self, key: bytes | None, value: bytes) -> str:
        """Store a message; returns its location ``<uri>/<uuid4>.json`` as TiCDC spells it."""
        name = f"{uuid.uuid4()}.json"
        content = value if self.raw_value else wrap(key, value)
        try:
            if self._scheme == "file":
                root = self._local_root()
                root.mkdir(parents=True, exist_ok=True)
                (root / name).write_bytes(content)
            else:
                fs, root_text = self._fs()
                fs.pipe_file(f"{root_text}/{name}", content)
        except OSError as exc:
            raise StorageUnavailableError(
                f"claim-check file {name!r} cannot be written to {self._scheme} storage: {exc}"
            ) from exc
        return f"{self.uri.rstrip('/')}/{name}"
