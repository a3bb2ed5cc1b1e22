"""Where a codec's events came in (:mod:`cdc_spark.decoding.origins`): a held row's own message, kept only for a
decoder that holds rows back and only until its row is given out."""

from __future__ import annotations

from cdc_core.events import Op, RowChange, Source
from cdc_core.message import Message
from cdc_spark.decoding.origins import Origins


def _message(offset: int) -> Message:
    return Message(value=f"m{offset}".encode(), topic="shop", partition=1, offset=offset)


def _row(message: Message) -> RowChange:
    return RowChange(op=Op.INSERT, database="shop", table="t", after={"id": 1}, source=Source.of(message))


def test_a_held_row_comes_out_at_its_own_message_and_place_once() -> None:
    origins = Origins()
    held, releasing, later = _message(4), _message(5), _message(6)
    assert origins.placed(held, [], holding=True) == []
    placed = origins.placed(releasing, [_row(held), _row(releasing), _row(releasing)], holding=True)
    assert placed == [(held, 0), (releasing, 0), (releasing, 1)]
    # given out once: a later event naming it again is placed at the message it came with
    assert origins.placed(later, [_row(held)], holding=True) == [(later, 0)]


def test_a_decoder_that_holds_nothing_keeps_no_message() -> None:
    origins = Origins()
    tombstone, after = _message(7), _message(8)
    assert origins.placed(tombstone, [], holding=False) == []
    assert origins.placed(after, [_row(tombstone), _row(after)], holding=False) == [(after, 0), (after, 1)]
