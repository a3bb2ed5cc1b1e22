"""Wire names of the Canal-JSON protocol: message keys, event types and java.sql.Types codes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from cdc_core.events import DDLType
from cdc_core.types import MySQLType

PROTOCOL: Final = "canal-json"

WATERMARK_TYPE: Final = "TIDB_WATERMARK"
DML_TYPES: Final = frozenset({"INSERT", "UPDATE", "DELETE"})
# Official Canal: INIT carries snapshot rows (Flink reads them as inserts).
INIT_TYPE: Final = "INIT"
# Official Canal event types that carry no row and no schema change: transaction markers and heartbeats.
ROWLESS_TYPES: Final = frozenset({"GTID", "XACOMMIT", "XAROLLBACK", "MHEARTBEAT", "BEGIN", "COMMIT"})
# QUERY is also the type of a rows-query event (the statement text before its rows), then with isDdl false.
ROWS_QUERY_TYPE: Final = "QUERY"

DDL_TYPES: Final[Mapping[str, DDLType]] = {t.value: t for t in DDLType}


class SqlType:
    """java.sql.Types codes TiCDC and Canal write in ``sqlType``."""

    BIT: Final = -7
    TINYINT: Final = -6
    BIGINT: Final = -5
    CHAR: Final = 1
    DECIMAL: Final = 3
    INTEGER: Final = 4
    SMALLINT: Final = 5
    REAL: Final = 7
    DOUBLE: Final = 8
    VARCHAR: Final = 12
    DATE: Final = 91
    TIME: Final = 92
    TIMESTAMP: Final = 93
    ARRAY: Final = 2003
    BLOB: Final = 2004
    CLOB: Final = 2005


# Base code per type (before the per-value unsigned promotion), tiflow canal/type.go semantics.
SQL_TYPE_CODES: Final[Mapping[MySQLType, int]] = {
    MySQLType.TINYINT: SqlType.TINYINT,
    MySQLType.SMALLINT: SqlType.SMALLINT,
    MySQLType.MEDIUMINT: SqlType.INTEGER,
    MySQLType.INT: SqlType.INTEGER,
    MySQLType.BIGINT: SqlType.BIGINT,
    MySQLType.FLOAT: SqlType.REAL,
    MySQLType.DOUBLE: SqlType.DOUBLE,
    MySQLType.DECIMAL: SqlType.DECIMAL,
    MySQLType.DATE: SqlType.DATE,
    MySQLType.DATETIME: SqlType.TIMESTAMP,
    MySQLType.TIMESTAMP: SqlType.TIMESTAMP,
    MySQLType.TIME: SqlType.TIME,
    MySQLType.YEAR: SqlType.VARCHAR,
    MySQLType.CHAR: SqlType.CHAR,
    MySQLType.VARCHAR: SqlType.VARCHAR,
    MySQLType.TINYTEXT: SqlType.CLOB,
    MySQLType.TEXT: SqlType.CLOB,
    MySQLType.MEDIUMTEXT: SqlType.CLOB,
    MySQLType.LONGTEXT: SqlType.CLOB,
    MySQLType.BINARY: SqlType.BLOB,
    MySQLType.VARBINARY: SqlType.BLOB,
    MySQLType.TINYBLOB: SqlType.BLOB,
    MySQLType.BLOB: SqlType.BLOB,
    MySQLType.MEDIUMBLOB: SqlType.BLOB,
    MySQLType.LONGBLOB: SqlType.BLOB,
    MySQLType.ENUM: SqlType.INTEGER,
    MySQLType.SET: SqlType.BIT,
    MySQLType.BIT: SqlType.BIT,
    MySQLType.JSON: SqlType.VARCHAR,
    MySQLType.VECTOR: SqlType.VARCHAR,
    # Canal reads spatial values as binary (java.sql.Types.BINARY, written as BLOB)
    MySQLType.GEOMETRY: SqlType.BLOB,
    MySQLType.POINT: SqlType.BLOB,
    MySQLType.LINESTRING: SqlType.BLOB,
    MySQLType.POLYGON: SqlType.BLOB,
    MySQLType.MULTIPOINT: SqlType.BLOB,
    MySQLType.MULTILINESTRING: SqlType.BLOB,
    MySQLType.MULTIPOLYGON: SqlType.BLOB,
    MySQLType.GEOMETRYCOLLECTION: SqlType.BLOB,
    MySQLType.ARRAY: SqlType.ARRAY,  # never written: the encoder refuses ARRAY values
}

# Unsigned promotion: an unsigned value above the signed maximum reports the next wider code (MEDIUMINT never).
UNSIGNED_PROMOTION: Final[Mapping[MySQLType, tuple[int, int]]] = {
    MySQLType.TINYINT: (127, SqlType.SMALLINT),
    MySQLType.SMALLINT: (32767, SqlType.INTEGER),
    MySQLType.INT: (2147483647, SqlType.BIGINT),
    MySQLType.BIGINT: (9223372036854775807, SqlType.DECIMAL),
}

# Types a decoder can fall back to when a column has a sqlType code but no mysqlType entry.
SQL_CODE_FALLBACK: Final[Mapping[int, MySQLType]] = {
    SqlType.BIT: MySQLType.BIT,
    SqlType.TINYINT: MySQLType.TINYINT,
    SqlType.BIGINT: MySQLType.BIGINT,
    SqlType.CHAR: MySQLType.CHAR,
    SqlType.DECIMAL: MySQLType.DECIMAL,
    SqlType.INTEGER: MySQLType.INT,
    SqlType.SMALLINT: MySQLType.SMALLINT,
    SqlType.REAL: MySQLType.FLOAT,
    SqlType.DOUBLE: MySQLType.DOUBLE,
    SqlType.VARCHAR: MySQLType.VARCHAR,
    SqlType.DATE: MySQLType.DATE,
    SqlType.TIME: MySQLType.TIME,
    SqlType.TIMESTAMP: MySQLType.DATETIME,
    SqlType.BLOB: MySQLType.BLOB,
    SqlType.CLOB: MySQLType.TEXT,
    SqlType.ARRAY: MySQLType.ARRAY,
}


def sql_type_code(mysql_type: MySQLType, unsigned: bool, value: object) -> int:
    """The ``sqlType`` code of one value: the base code, promoted for large unsigned integers."""
    code = SQL_TYPE_CODES[mysql_type]
    if unsigned and isinstance(value, int):
        promotion = UNSIGNED_PROMOTION.get(mysql_type)
        if promotion is not None and value > promotion[0]:
            return promotion[1]
    return code
