"""The error tree is a contract: one root, builtin bases for leaves, messages that locate the problem."""

from __future__ import annotations

import inspect

import pytest

import cdc_core.errors as errors
from cdc_core.errors import CdcError, ChecksumError, DecodeError, EncodeError, HeldRowsLimitError
from cdc_core.message import Message

ALL_ERRORS = [
    obj
    for _, obj in inspect.getmembers(errors, inspect.isclass)
    if issubclass(obj, Exception) and obj.__module__ == errors.__name__
]


def test_every_error_is_under_the_root_and_a_builtin() -> None:
    assert CdcError in ALL_ERRORS
    for error in ALL_ERRORS:
        assert issubclass(error, CdcError), error
        if error is not CdcError:
            builtin = [
                base
                for base in error.__mro__
                if base.__module__ == "builtins" and base not in (Exception, BaseException, object)
            ]
            assert builtin, f"{error.__name__} should also inherit a builtin exception"


def test_decode_error_names_protocol_coordinates_field_and_reason() -> None:
    message = Message(value=b"{}", topic="orders", partition=2, offset=17)
    error = DecodeError.at(message, "debezium", "expected an object, got int", field="payload.after")
    assert str(error) == "debezium: message orders[2]@17 field payload.after: expected an object, got int"
    assert (error.topic, error.partition, error.offset, error.field) == ("orders", 2, 17, "payload.after")
    assert isinstance(error, ValueError)


def test_located_fills_only_missing_coordinates() -> None:
    error = DecodeError("simple", "bad checksum", field="data.id", offset=5)
    error.located(Message(value=b"", topic="t", partition=1, offset=99))
    assert str(error) == "simple: message t[1]@5 field data.id: bad checksum"


def test_without_coordinates_says_message() -> None:
    assert str(DecodeError("avro", "truncated datum")) == "avro: message: truncated datum"


def test_leaves_keep_their_family() -> None:
    assert issubclass(ChecksumError, DecodeError)
    assert issubclass(HeldRowsLimitError, errors.LimitExceededError)
    encode = EncodeError("canal-json", "value out of range", table="shop.orders", field="qty")
    assert "canal-json" in str(encode) and "shop.orders" in str(encode) and "qty" in str(encode)


@pytest.mark.parametrize("error", ALL_ERRORS)
def test_every_error_can_be_raised_and_caught_as_the_root(error: type[CdcError]) -> None:
    try:
        instance = error("protocol", "reason")
    except TypeError:
        instance = error("reason")
    with pytest.raises(CdcError) as caught:
        raise instance
    assert "reason" in str(caught.value)
