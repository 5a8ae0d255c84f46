"""One cache root for every cache."""

from pathlib import Path

from stellar.llm.cache import default_cache_path
from stellar.paths import cache_root
from stellar.search.twise import cache_dir
from stellar.usecases.navi.sources import default_cache_path as venue_cache_path


def test_every_cache_follows_stellar_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("STELLAR_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    for path in (default_cache_path(), cache_dir(), venue_cache_path()):
        assert path.is_relative_to(tmp_path / "c")


def test_the_root_defaults_under_xdg_cache_home_then_home(monkeypatch, tmp_path):
    monkeypatch.delenv("STELLAR_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_root() == tmp_path / "stellar"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_root() == Path.home() / ".cache" / "stellar"
