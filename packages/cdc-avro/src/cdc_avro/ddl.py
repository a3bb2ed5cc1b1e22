"""The DDL message of TiCDC's ``avro-enable-watermark`` testing switch: byte 0x01 + JSON with TiDB's action code."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from cdc_core.events import DDLType

# A representative TiDB ActionType per DDL class (encoding), and every action code a decoder may meet.
ACTION_FOR_TYPE: Final[Mapping[DDLType, int]] = {
    DDLType.CREATE: 3,  # ActionCreateTable
    DDLType.ERASE: 4,  # ActionDropTable
    DDLType.ALTER: 5,  # ActionAddColumn
    DDLType.CINDEX: 7,  # ActionAddIndex
    DDLType.DINDEX: 8,  # ActionDropIndex
    DDLType.TRUNCATE: 11,  # ActionTruncateTable
    DDLType.RENAME: 14,  # ActionRenameTable
    DDLType.QUERY: 0,  # ActionNone: a statement TiCDC does not classify
}

TYPE_FOR_ACTION: Final[Mapping[int, DDLType]] = {
    1: DDLType.CREATE,  # create schema
    2: DDLType.ERASE,  # drop schema
    3: DDLType.CREATE,
    4: DDLType.ERASE,
    7: DDLType.CINDEX,
    8: DDLType.DINDEX,
    11: DDLType.TRUNCATE,
    14: DDLType.RENAME,
    21: DDLType.CREATE,  # create view
    24: DDLType.ERASE,  # drop view
    58: DDLType.CINDEX,  # add primary key
    59: DDLType.DINDEX,  # drop primary key
    60: DDLType.CREATE,  # create sequence
    62: DDLType.ERASE,  # drop sequence
    0: DDLType.QUERY,
}


def ddl_type_of(action: int) -> DDLType:
    """Every other action (add/drop/modify column, partitions, options...) alters an existing table."""
    return TYPE_FOR_ACTION.get(action, DDLType.ALTER)
