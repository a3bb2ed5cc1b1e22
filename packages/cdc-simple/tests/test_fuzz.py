"""The decoder contract under mutation: only CdcError subclasses escape, for both encodings."""

from __future__ import annotations

from cdc_core.codec import Decoder
from cdc_core.events import Op, RowChange
from cdc_core.message import Message
from cdc_simple import CODEC
from cdc_testing.contract import assert_only_cdc_errors
from cdc_testing.strategies import kitchen_sink_schema

SCHEMA = kitchen_sink_schema()


def test_json_decoder_survives_mutations(spec_messages: dict[str, bytes]) -> None:
    alter = Message(value=spec_messages["ALTER"])

    def primed() -> Decoder:
        decoder = CODEC.decoder({"integrity-check-level": "correctness"})
        decoder.decode(alter)  # rows of the spec table reach value decoding instead of being held
        return decoder

    seeds = [Message(value=value) for value in spec_messages.values()]
    assert assert_only_cdc_errors(primed, seeds, max_examples=300) == 300


def test_avro_decoder_survives_mutations() -> None:
    encoder = CODEC.encoder({"encoding-format": "avro", "integrity-check-level": "correctness"})
    row = RowChange(
        op=Op.UPDATE,
        database="test",
        table="kitchen_sink",
        before={"id": 1, "c_bigint_u": 2**64 - 1, "c_varchar": "a", "c_blob": b"\x00", "c_set": ("x",)},
        after={"id": 1, "c_float": 1.5, "c_enum": "red", "c_bit_12": 7, "c_json": {"k": [1]}},
        commit_ts=1 << 40,
        table_id=100,
        schema_version=SCHEMA.version,
        schema=SCHEMA,
    )
    bootstrap, update = encoder.encode(row)

    def primed() -> Decoder:
        decoder = CODEC.decoder({"encoding-format": "avro", "integrity-check-level": "correctness"})
        decoder.decode(bootstrap)
        return decoder

    assert assert_only_cdc_errors(primed, [bootstrap, update], max_examples=300) == 300
