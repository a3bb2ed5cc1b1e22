"""Completeness of the mapping tables: every type of the core model has an entry in each direction."""

from __future__ import annotations

import pytest

from cdc_core.types import LogicalType, MySQLType
from cdc_debezium.column_readers import converter_for
from cdc_debezium.connector_modes import Modes
from cdc_debezium.ddl import JDBC_TYPES
from cdc_debezium.outbound import WRITERS, connect_type
from cdc_testing.strategies import KITCHEN_SINK_TYPES


def test_every_logical_type_has_a_writer() -> None:
    assert set(WRITERS) == set(LogicalType)


def test_every_mysql_type_has_a_jdbc_code() -> None:
    assert set(JDBC_TYPES) == set(MySQLType)


@pytest.mark.parametrize("name", sorted(KITCHEN_SINK_TYPES))
def test_every_column_type_has_a_connect_type_and_readers(name: str) -> None:
    data_type = KITCHEN_SINK_TYPES[name]
    kind, logical_name, _ = connect_type(data_type)
    # the reader for the encoder's own wire form, and the schemaless reader, both exist
    assert callable(converter_for(kind, logical_name.value if logical_name else None, data_type, Modes()))
    assert callable(converter_for(None, None, data_type, Modes()))
    assert data_type.logical in WRITERS
