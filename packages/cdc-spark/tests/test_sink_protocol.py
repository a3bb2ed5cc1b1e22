"""Every installed sink is a whole :class:`~cdc_spark.sinks.Sink`: the job writes tables and dead letters through
that protocol alone, so a sink that lacks a member of it fails here, not in the middle of a stream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cdc_spark.sinks import Sink, available_sinks, load_sink

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("name", sorted(available_sinks()))
def test_every_installed_sink_has_every_member_of_the_protocol(spark: Any, tmp_path: Path, name: str) -> None:
    sink = load_sink(name, spark, str(tmp_path))
    assert isinstance(sink, Sink)  # a runtime-checkable protocol: every member is there
