"""Discovery of installed codecs through the ``cdc_core.codecs`` entry-point group."""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points
from typing import Final

from cdc_core.codec import Codec
from cdc_core.errors import CdcError, CodecNotFoundError

ENTRY_POINT_GROUP: Final = "cdc_core.codecs"

# Which distribution provides which protocol, for the "install this" hint.
PROVIDERS: Final = {
    "debezium": "cdc-debezium",
    "debezium-avro": "'cdc-debezium[avro]'",
    "simple": "cdc-simple",
    "avro": "cdc-avro",
    "canal-json": "cdc-canal",
}


@cache
def _discover() -> tuple[dict[str, Codec], dict[str, str]]:
    """Loaded codecs by protocol, and the entry points that failed to load with the reason."""
    found: dict[str, Codec] = {}
    broken: dict[str, str] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            codec = point.load()
        except Exception as exc:  # a broken plugin must not hide the others: it fails only when asked for
            broken[point.name] = f"codec entry point {point.name!r} ({point.value}) failed to load: {exc}"
            continue
        if not isinstance(codec, Codec):
            broken[point.name] = f"codec entry point {point.name!r} ({point.value}) is not a cdc_core.codec.Codec"
            continue
        found[codec.name] = codec
    return found, broken


def installed_codecs() -> dict[str, Codec]:
    """Every installed codec that loads, by protocol name (see :func:`broken_codecs` for the others)."""
    return dict(_discover()[0])


def broken_codecs() -> dict[str, str]:
    """Entry points of the ``cdc_core.codecs`` group that are installed but fail to load, with the reason."""
    return dict(_discover()[1])


def get_codec(protocol: str) -> Codec:
    codecs, broken = _discover()
    if protocol in codecs:
        return codecs[protocol]
    if protocol in broken:
        raise CdcError(broken[protocol])
    provider = PROVIDERS.get(protocol)
    installed = ", ".join(sorted(codecs)) or "none"
    if provider is not None:
        raise CodecNotFoundError(
            f"protocol {protocol!r} is not installed: pip install {provider} (installed protocols: {installed})"
        )
    known = ", ".join(sorted(PROVIDERS))
    raise CodecNotFoundError(f"unknown protocol {protocol!r}; known protocols: {known} (installed: {installed})")
