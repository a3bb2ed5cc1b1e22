"""The ``tidb_type`` names TiCDC writes into ``connect.parameters``, both ways.

Outbound, several MySQL types share one name (every text type is ``TEXT``, every binary one ``BLOB``, the
small integers ``INT``); inbound, each name maps back to one representative MySQL type, which is all a
consumer can know from the writer schema and all it needs to type the values.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final

from cdc_core.errors import SchemaError
from cdc_core.types import MySQLType


class DecimalMode(StrEnum):
    """``avro-decimal-handling-mode``."""

    PRECISE = "precise"
    STRING = "string"


class BigintUnsignedMode(StrEnum):
    """``avro-bigint-unsigned-handling-mode``."""

    LONG = "long"
    STRING = "string"


TIDB_TYPE: Final[Mapping[MySQLType, str]] = {
    MySQLType.TINYINT: "INT",
    MySQLType.SMALLINT: "INT",
    MySQLType.MEDIUMINT: "INT",
    MySQLType.INT: "INT",
    MySQLType.BIGINT: "BIGINT",
    MySQLType.FLOAT: "FLOAT",
    MySQLType.DOUBLE: "DOUBLE",
    MySQLType.DECIMAL: "DECIMAL",
    MySQLType.DATE: "DATE",
    MySQLType.DATETIME: "DATETIME",
    MySQLType.TIMESTAMP: "TIMESTAMP",
    MySQLType.TIME: "TIME",
    MySQLType.YEAR: "YEAR",
    MySQLType.CHAR: "TEXT",
    MySQLType.VARCHAR: "TEXT",
    MySQLType.TINYTEXT: "TEXT",
    MySQLType.TEXT: "TEXT",
    MySQLType.MEDIUMTEXT: "TEXT",
    MySQLType.LONGTEXT: "TEXT",
    MySQLType.BINARY: "BLOB",
    MySQLType.VARBINARY: "BLOB",
    MySQLType.TINYBLOB: "BLOB",
    MySQLType.BLOB: "BLOB",
    MySQLType.MEDIUMBLOB: "BLOB",
    MySQLType.LONGBLOB: "BLOB",
    MySQLType.ENUM: "ENUM",
    MySQLType.SET: "SET",
    MySQLType.BIT: "BIT",
    MySQLType.JSON: "JSON",
    MySQLType.VECTOR: "TiDBVECTORFloat32",
}

# Only the integer types carry an " UNSIGNED" suffix in tidb_type.
UNSIGNED_SUFFIXED: Final = frozenset({"INT", "BIGINT"})

# tidb_type (without " UNSIGNED") -> the MySQL type a decoder types the column as.
FROM_TIDB_TYPE: Final[Mapping[str, MySQLType]] = {
    "INT": MySQLType.INT,
    "BIGINT": MySQLType.BIGINT,
    "FLOAT": MySQLType.FLOAT,
    "DOUBLE": MySQLType.DOUBLE,
    "DECIMAL": MySQLType.DECIMAL,
    "DATE": MySQLType.DATE,
    "DATETIME": MySQLType.DATETIME,
    "TIMESTAMP": MySQLType.TIMESTAMP,
    "TIME": MySQLType.TIME,
    "YEAR": MySQLType.YEAR,
    "TEXT": MySQLType.TEXT,
    "BLOB": MySQLType.BLOB,
    "ENUM": MySQLType.ENUM,
    "SET": MySQLType.SET,
    "BIT": MySQLType.BIT,
    "JSON": MySQLType.JSON,
    "TiDBVECTORFloat32": MySQLType.VECTOR,
}


def tidb_type(mysql_type: MySQLType, unsigned: bool) -> str:
    name = TIDB_TYPE.get(mysql_type)
    if name is None:  # NOT_IN_TIDB: spatial types, arrays
        raise SchemaError(f"TiDB has no {mysql_type.value} columns: the avro protocol cannot carry them")
    return f"{name} UNSIGNED" if unsigned and name in UNSIGNED_SUFFIXED else name


def avro_primitive(
    mysql_type: MySQLType, unsigned: bool, decimal_mode: DecimalMode, bigint_mode: BigintUnsignedMode
) -> str:
    """The Avro primitive of a column (``bytes`` for precise DECIMAL, which adds the decimal logical type)."""
    if mysql_type in (MySQLType.TINYINT, MySQLType.SMALLINT, MySQLType.MEDIUMINT, MySQLType.YEAR):
        return "int"
    if mysql_type is MySQLType.INT:
        return "long" if unsigned else "int"
    if mysql_type is MySQLType.BIGINT:
        return "string" if unsigned and bigint_mode is BigintUnsignedMode.STRING else "long"
    if mysql_type is MySQLType.FLOAT:
        return "float"
    if mysql_type is MySQLType.DOUBLE:
        return "double"
    if mysql_type is MySQLType.DECIMAL:
        return "bytes" if decimal_mode is DecimalMode.PRECISE else "string"
    if tidb_type(mysql_type, False) in ("BLOB", "BIT"):
        return "bytes"
    return "string"
