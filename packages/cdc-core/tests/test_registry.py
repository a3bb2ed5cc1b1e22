"""Codec discovery: a plugin that fails to load is reported by name and hides none of the working ones."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdc_core import registry
from cdc_core.errors import CdcError, CodecNotFoundError

PLUGIN = """
from cdc_core.codec import Codec

def _refuse(options):
    raise NotImplementedError("this test codec only exists to be discovered")

CODEC = Codec(name="fixture-json", description="discovery test", options=(), make_decoder=_refuse,
              make_encoder=_refuse, package="fixture-plugins")
"""


@pytest.fixture
def plugins(tmp_path: Path) -> Iterator[None]:
    """A real installed distribution (dist-info on sys.path) with one working and two broken codec entry points."""
    (tmp_path / "fixture_plugin.py").write_text(PLUGIN)
    (tmp_path / "fixture_not_codec.py").write_text("CODEC = 42\n")
    info = tmp_path / "fixture_plugins-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fixture-plugins\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[cdc_core.codecs]\n"
        "fixture-json = fixture_plugin:CODEC\n"
        "fixture-missing = fixture_module_that_is_not_there:CODEC\n"
        "fixture-number = fixture_not_codec:CODEC\n"
    )
    sys.path.insert(0, str(tmp_path))
    registry._discover.cache_clear()
    try:
        yield
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("fixture_plugin", "fixture_not_codec"):
            sys.modules.pop(name, None)
        registry._discover.cache_clear()


@pytest.mark.usefixtures("plugins")
def test_broken_plugins_are_reported_and_working_ones_load() -> None:
    assert registry.installed_codecs()["fixture-json"].package == "fixture-plugins"
    broken = registry.broken_codecs()
    assert "fixture_module_that_is_not_there" in broken["fixture-missing"]
    assert "is not a cdc_core.codec.Codec" in broken["fixture-number"]
    assert "fixture-missing" not in registry.installed_codecs()


@pytest.mark.usefixtures("plugins")
def test_asking_for_a_broken_plugin_says_why() -> None:
    with pytest.raises(CdcError, match=r"fixture-missing.*failed to load"):
        registry.get_codec("fixture-missing")
    with pytest.raises(CodecNotFoundError, match="unknown protocol 'nothing-like-it'"):
        registry.get_codec("nothing-like-it")
