"""Adding a LogicalType member fails the type check (mypy --strict) in cdc-core and in every adapter until each
visitor and table handles it: run on a patched copy of cdc_core against the adapters' real sources."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import cdc_core

# A new member, added in two steps: only to the enum; then to the dispatcher and the table builder as their
# comment says (the adapters are not yet told). Each step must fail mypy where it is incomplete.
_NEW = "UUID"  # a member the enum does not have yet
_new = _NEW.lower()


def _patched_types(source: str, *, complete_core: bool) -> str:
    head, enum, rest = source.partition("class LogicalType(StrEnum):")
    rest = rest.replace('    ARRAY = "array"\n', f'    ARRAY = "array"\n    {_NEW} = "{_new}"\n', 1)
    source = head + enum + rest
    if complete_core:
        source = source.replace(
            "            case LogicalType.ARRAY:\n                return self.visit_array(data_type)\n",
            "            case LogicalType.ARRAY:\n                return self.visit_array(data_type)\n"
            f"            case LogicalType.{_NEW}:\n                return self.visit_{_new}(data_type)\n",
        )
        source = source.replace(
            "    @abstractmethod\n    def visit_array(self, data_type: DataType) -> R: ...\n",
            "    @abstractmethod\n    def visit_array(self, data_type: DataType) -> R: ...\n"
            f"    @abstractmethod\n    def visit_{_new}(self, data_type: DataType) -> R: ...\n",
        )
        source = source.replace("    array: V,\n) ->", f"    array: V,\n    {_new}: V,\n) ->")
        source = source.replace(
            "            case LogicalType.ARRAY:\n                return array\n",
            "            case LogicalType.ARRAY:\n                return array\n"
            f"            case LogicalType.{_NEW}:\n                return {_new}\n",
        )
        source = source.replace("    array=False,\n)", f"    array=False,\n    {_new}=False,\n)")
    return source


def _mypy(tmp_path: Path, *modules: str) -> str:
    command = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental"]
    for module in modules:
        command += ["-m", module]
    env = {"MYPYPATH": str(tmp_path / "src"), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False, env=env, cwd=tmp_path)
    return result.stdout + result.stderr


def _core_copy(tmp_path: Path, *, complete_core: bool) -> None:
    package = Path(cdc_core.__file__).parent
    shutil.copytree(package, tmp_path / "src" / "cdc_core")
    types = tmp_path / "src" / "cdc_core" / "types.py"
    types.write_text(_patched_types(types.read_text(), complete_core=complete_core))


@pytest.mark.slow
def test_a_new_member_fails_the_type_check_until_every_switch_handles_it(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    pytest.importorskip("cdc_canal")
    pytest.importorskip("cdc_debezium")
    pytest.importorskip("cdc_simple")
    pytest.importorskip("cdc_spark")
    # 1. only the enum: the visitor's dispatcher and the table builder are no longer exhaustive
    _core_copy(tmp_path / "one", complete_core=False)
    out = _mypy(tmp_path / "one", "cdc_core.types")
    assert len(re.findall(r"types\.py:\d+: error: Argument 1 to \"assert_never\" has incompatible type", out)) == 2, out

    # 2. the core completed as the comment says: every adapter's visitor and table now fails
    _core_copy(tmp_path / "two", complete_core=True)
    adapters = (
        "cdc_canal.outbound",
        "cdc_debezium.outbound",
        "cdc_debezium.column_readers",
        "cdc_simple.columns",
        "cdc_spark.decoding.spark_types",
        "cdc_spark.decoding.canal",
        "cdc_spark.decoding.simple",
        "cdc_spark.decoding.debezium",
        "cdc_spark.decoding.avro",
    )
    out = _mypy(tmp_path / "two", "cdc_core.types", *adapters)
    assert "cdc_core/types.py" not in out, out
    assert re.search(r"cdc_canal/outbound\.py:\d+: error: Missing named argument \"uuid\"", out), out
    assert re.search(
        r"cdc_debezium/outbound\.py:\d+: error: Cannot instantiate abstract class \"_ConnectType\"", out
    ), out
    abstract = r"error: Cannot instantiate abstract class \"{}\" with abstract attribute \"visit_uuid\""
    assert re.search(r"cdc_debezium/outbound\.py:\d+: " + abstract.format("_ConnectType"), out), out
    assert re.search(r"cdc_spark/decoding/spark_types\.py:\d+: " + abstract.format("_SparkValue"), out), out
    assert re.search(r"cdc_simple/columns\.py:\d+: error: Missing named argument \"uuid\"", out), out
    # the JVM path's readers (a protocol's reader subclasses jvm_values.TextReader: both lack the new method) and the
    # Debezium codec's converter choice
    for module, visitor in (
        ("cdc_debezium/column_readers", "_PlainConverter"),
        ("cdc_debezium/column_readers", "_Schemaless"),
        ("cdc_spark/decoding/canal", "_CanalReader"),
        ("cdc_spark/decoding/simple", "_SimpleReader"),
        ("cdc_spark/decoding/debezium", "_SchemalessForm"),
        ("cdc_spark/decoding/debezium", "_PlainForm"),
        ("cdc_spark/decoding/avro", "_ValueReader"),
    ):
        assert re.search(module + r"\.py:\d+: " + abstract.format(visitor), out), (visitor, out)
