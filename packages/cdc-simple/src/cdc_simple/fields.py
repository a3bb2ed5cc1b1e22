"""Typed access to fields of a parsed message, failing with a `DecodeError` that names the field path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc_core.errors import DecodeError, json_kind
from cdc_simple.names import PROTOCOL

_UINT64_MAX = (1 << 64) - 1
_INT64_MIN = -(1 << 63)


def fail(reason: str, field: str | None = None) -> DecodeError:
    return DecodeError(PROTOCOL, reason, field=field)


def obj(doc: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    value = doc.get(key)
    if not isinstance(value, Mapping):
        raise fail(f"expected an object, got {json_kind(value)}", _join(path, key))
    return value


def opt_obj(doc: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any] | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise fail(f"expected an object or null, got {json_kind(value)}", _join(path, key))
    return value


def string(doc: Mapping[str, Any], key: str, path: str) -> str:
    value = doc.get(key)
    if not isinstance(value, str):
        raise fail(f"expected a string, got {json_kind(value)}", _join(path, key))
    return value


def opt_string(doc: Mapping[str, Any], key: str, path: str) -> str | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise fail(f"expected a string, got {json_kind(value)}", _join(path, key))
    return value


def boolean(doc: Mapping[str, Any], key: str, path: str, default: bool | None = None) -> bool:
    value = doc.get(key, default)
    if value is None and default is not None:
        return default
    if not isinstance(value, bool):
        raise fail(f"expected a boolean, got {json_kind(value)}", _join(path, key))
    return value


def integer(doc: Mapping[str, Any], key: str, path: str, default: int | None = None) -> int:
    """A JSON integer within Go's int64/uint64 range (TSOs, IDs, versions)."""
    value = doc.get(key, default)
    if value is None and default is not None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise fail(f"expected an integer, got {json_kind(value)}", _join(path, key))
    if not _INT64_MIN <= value <= _UINT64_MAX:
        raise fail(f"integer {value} is outside the 64-bit range", _join(path, key))
    return value


def str_list(doc: Mapping[str, Any], key: str, path: str) -> list[str] | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail("expected a list of strings", _join(path, key))
    return value


def obj_list(doc: Mapping[str, Any], key: str, path: str) -> list[Mapping[str, Any]]:
    value = doc.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise fail("expected a list of objects", _join(path, key))
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
