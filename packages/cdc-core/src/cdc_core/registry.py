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
    "simple": "cdc-simple",
    "avro": "cdc-avro",
    "canal-json": "cdc-canal",
}


@cache
def installed_codecs() -> dict[str, Codec]:
    """Every installed codec by protocol name."""
    found: dict[str, Codec] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            codec = point.load()
        except Exception as exc:  # a broken plugin must not hide the others
            raise CdcError(f"codec entry point {point.name!r} ({point.value}) failed to load: {exc}") from exc
        if not isinstance(codec, Codec):
            raise CdcError(f"codec entry point {point.name!r} ({point.value}) is not a cdc_core.codec.Codec")
        found[codec.name] = codec
    return found


def get_codec(protocol: str) -> Codec:
    codecs = installed_codecs()
    if protocol in codecs:
        return codecs[protocol]
    provider = PROVIDERS.get(protocol)
    installed = ", ".join(sorted(codecs)) or "none"
    if provider is not None:
        raise CodecNotFoundError(
            f"protocol {protocol!r} is not installed: pip install {provider} (installed protocols: {installed})"
        )
    known = ", ".join(sorted(PROVIDERS))
    raise CodecNotFoundError(f"unknown protocol {protocol!r}; known protocols: {known} (installed: {installed})")
