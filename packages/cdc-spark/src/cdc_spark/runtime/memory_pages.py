"""Tungsten's memory pages sized for a local driver's heap, so that no page is a G1 "humongous" object.

Spark sizes a task's sort and hash pages from its execution memory (8 MB for a 1 GB local driver of two cores, 32
MB for 2 GB), allocated on the heap as one ``long[]`` each. Under G1 (Java 17's default collector) an object over
half a region is humongous: its allocation may start a concurrent mark cycle (84 of 91 such starts in four minutes
of the Spark tests), and a micro-batch runs dozens of sorts and aggregates of a few rows, each with a fresh page.
Spark 4.1's ``SortExec`` also keeps its sorter in a thread local of the task thread, so a finished sort's page stays
reachable until that thread next cleans its thread locals: in the tests' JVM (2 GB) 14 such 32 MB pages, 470 MB,
were live after a full collection.

So a local master gets pages of a quarter region (256 KB up to a 2 GB heap), or just under half a region where
Spark's page table (8,192 pages a task) would otherwise hold less than the heap: never humongous, and a task can
still fill the whole execution memory. Above a 128 GB heap no such page is large enough and Spark's default stays.
Measured in ``docs/spark.md`` ("Memory pages").
"""

from __future__ import annotations

import re
from typing import Final

PAGE_SIZE: Final = "spark.buffer.pageSize"
DRIVER_MEMORY: Final = "spark.driver.memory"
DRIVER_MEMORY_ENV: Final = "SPARK_DRIVER_MEMORY"  # what Spark's launcher uses when the setting is absent
DEFAULT_DRIVER_MEMORY: Final = "1g"  # Spark's own default

_MIB: Final = 1 << 20
_UNITS: Final = {"k": 1 << 10, "m": _MIB, "g": 1 << 30, "t": 1 << 40}
# G1's ergonomic region size (Java 17): the heap over 2,048 regions, rounded down to a power of two, 1 to 32 MB
_REGIONS: Final = 2048
_MIN_REGION: Final = _MIB
_MAX_REGION: Final = 32 * _MIB
_PAGES: Final = 8192  # Spark's page table: a task holds at most this many pages
_SLACK: Final = 1024  # a page under half a region by more than the array's header stays below the threshold


def memory_bytes(text: str) -> int | None:
    """A JVM memory string as Spark reads ``spark.driver.memory`` (``512m``, ``2g``; a bare number is MiB); None
    when it is not one (Spark then refuses it itself, in its own words)."""
    found = re.fullmatch(r"\s*(\d+)\s*([kmgt])?b?\s*", text.lower())
    if found is None:
        return None
    number, unit = found.groups()
    return int(number) * _UNITS[unit or "m"]


def g1_region_bytes(heap: int) -> int:
    """The region size G1 picks for a heap of ``heap`` bytes when none is set."""
    target = max(heap // _REGIONS, _MIN_REGION)
    return min(1 << (target.bit_length() - 1), _MAX_REGION)


def local_page_size(driver_memory: str | None) -> str | None:
    """``spark.buffer.pageSize`` for a local driver of ``driver_memory`` (Spark's default when None): a quarter
    region, else just under half a region where Spark's 8,192 pages of a quarter would not hold the heap; None
    when the memory is not a size or no page below half a region is large enough (heaps over 128 GB)."""
    heap = memory_bytes(driver_memory or DEFAULT_DRIVER_MEMORY)
    if heap is None:
        return None
    region = g1_region_bytes(heap)
    for page in (region // 4, region // 2 - _SLACK):
        if _PAGES * page >= heap:
            return f"{page // 1024}k"
    return None


__all__ = ["DRIVER_MEMORY", "DRIVER_MEMORY_ENV", "PAGE_SIZE", "g1_region_bytes", "local_page_size", "memory_bytes"]
