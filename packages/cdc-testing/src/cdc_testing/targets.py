"""``cdc apply`` run for real (the workspace's ``cdc`` executable, as a subprocess) into Delta tables, and those
tables compared with the database's final state after the documented Spark type mapping (docs/types.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from cdc_testing.processes import SUBMIT_OPTIONS_ENV
from cdc_testing.producers import Expected, TableState, dead_letter_lines, same_stored, unchanged_since_added

DEAD_LETTERS = "_dead_letters"


def read_target_table(path: Path) -> list[dict[str, Any]]:
    """Live rows of a target table: bookkeeping columns (``__cdc_*``) dropped, tombstoned rows left out."""
    from deltalake import DeltaTable

    rows = DeltaTable(str(path)).to_pyarrow_table().to_pylist()
    live = [r for r in rows if not r.get("__cdc_deleted")]
    return [{k: v for k, v in r.items() if not k.startswith("__cdc_")} for r in live]


KEY_STATE = "_cdc_keys"  # the sinks' SCD1 key state under a target directory (cdc_spark.sinks)


def read_location(location: str, table_format: str) -> list[dict[str, Any]]:
    """Every row of the Delta or Iceberg table at ``location``, read without Spark (delta-rs, pyiceberg)."""
    if table_format == "delta":
        from deltalake import DeltaTable

        return list(DeltaTable(location).to_pyarrow_table().to_pylist())
    from pyiceberg.table import StaticTable

    with open(os.path.join(location, "metadata", "version-hint.text"), encoding="utf-8") as handle:
        version = handle.read().strip()
    metadata = os.path.join(location, "metadata", f"v{version}.metadata.json")
    return list(StaticTable.from_metadata(metadata).scan().to_arrow().to_pylist())


def key_state(target: str, table: str, table_format: str = "delta") -> dict[tuple[str, ...], dict[str, Any]]:
    """The SCD1 key state of ``table`` (``database.table``) under the target directory ``target``, by key: each
    key as the texts of its columns' values, in the key's column order."""
    rows = read_location(os.path.join(target, KEY_STATE), table_format)
    kept = [r for r in rows if r["__cdc_table"] == table and r["__cdc_key"]]
    return {tuple(json.loads(r["__cdc_key"]).values()): r for r in kept}


def delta_commit_metadata(path: str) -> list[str]:
    """The user metadata of a Delta table's commits that carry one, oldest first (read with delta-rs)."""
    from deltalake import DeltaTable

    return [str(h["userMetadata"]) for h in reversed(DeltaTable(path).history()) if "userMetadata" in h]


def cdc_executable() -> Path:
    """The ``cdc`` console script of the running Python's environment."""
    candidate = Path(sys.executable).parent / "cdc"
    if not candidate.exists():
        raise FileNotFoundError(f"no cdc executable beside {sys.executable}")
    return candidate


def run_cdc_apply(
    protocol: str,
    bootstrap: str,
    topics: Sequence[str],
    target: Path,
    timeout_s: float = 600,
    *,
    options: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """``cdc apply --once`` of ``topics`` into ``target`` on ``local[1]``, in an environment of only what it needs
    (the Python, Java, the JVM jar cache and the tests' driver options), so a test sees what a user's shell would;
    ``options``: the codec's (``--option KEY=VALUE``)."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": os.environ.get("HOME", str(target.parent)),
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    for name in ("JAVA_HOME", "CDC_JVM_CACHE", SUBMIT_OPTIONS_ENV):
        if name in os.environ:
            env[name] = os.environ[name]
    source = f"kafka://{bootstrap}/{','.join(topics)}"
    command = [str(cdc_executable()), "apply", "--protocol", protocol, "--source", source, "--target", str(target)]
    command += [part for key, value in (options or {}).items() for part in ("--option", f"{key}={value}")]
    return subprocess.run(
        [*command, "--once", "--master", "local[1]", "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def target_differences(
    target: Path,
    database: str,
    states: Mapping[str, Sequence[TableState]],
    expected: Expected,
    *,
    float32: Callable[[str, str], bool],
    added: Collection[str] = (),
) -> str | None:
    """None when the target holds no dead letter and each table of ``database`` equals its last state in
    ``states``, else what differs (the dead letters, then up to 20 differing keys or values).

    ``expected(table, column, value)`` is the decoded value of the database's; ``float32(table, column)`` says
    the column is a FLOAT (Spark holds it as float32). A column of ``added`` (added by ADD COLUMN mid-stream)
    is expected null in the rows no change touched since: the database filled in its default, no event did.
    """
    dead = target / DEAD_LETTERS
    dead_rows = read_target_table(dead) if dead.exists() else []
    mismatches = []
    for table, table_states in states.items():
        want = table_states[-1]
        path = target / database / table
        have = {r["id"]: r for r in read_target_table(path)} if path.exists() else {}
        if set(have) != set(want):
            mismatches.append(f"{table}: keys {sorted(want)} in the database, {sorted(have)} in the target")
            continue
        untouched = unchanged_since_added(table_states, added)
        for key, row in want.items():
            for column, value in row.items():
                decoded = None if column in added and key in untouched else expected(table, column, value)
                why = same_stored(decoded, have[key].get(column), float32=float32(table, column))
                if why is not None:
                    mismatches.append(f"{table} row {key} column {column}: {why}")
    if not dead_rows and not mismatches:
        return None
    return dead_letter_lines(dead_rows) + "\n" + "\n".join(mismatches[:20])


__all__ = ["DEAD_LETTERS", "cdc_executable", "read_target_table", "run_cdc_apply", "target_differences"]
