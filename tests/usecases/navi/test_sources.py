"""Tests for the venue sources (stellar.usecases.navi.sources)."""

from __future__ import annotations

from pathlib import Path

import pytest
from navi_samples import business, make_poi

from stellar.usecases.navi.city import generate_pois
from stellar.usecases.navi.sources import (
    PACKAGED_MULTIWOZ,
    build_database,
    default_cache_path,
    default_database,
    open_pois,
)
from stellar.usecases.navi.store import POIDatabase


def test_default_database_built_once_in_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STELLAR_CACHE_DIR", str(tmp_path))
    path = default_cache_path(seed=2)
    assert path == tmp_path / "navi-pois-seed2-v1.sqlite"
    first = default_database(seed=2)
    assert first.path == path and len(first) == 3000
    stamp = path.stat().st_mtime_ns
    second = default_database(seed=2)
    assert path.stat().st_mtime_ns == stamp
    assert second.all() == generate_pois(seed=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_default_database_rebuilds_a_broken_or_foreign_cache(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    path.write_text("garbage")
    assert len(default_database(path, seed=0)) == 3000
    POIDatabase.create(path, [make_poi(1)]).close()
    assert len(default_database(path, seed=0)) == 3000


def test_build_database_sources(tmp_path: Path) -> None:
    generated = build_database("generated", tmp_path / "g.sqlite", seed=4)
    assert generated.all() == generate_pois(seed=4)
    yelp = tmp_path / "business.json"
    yelp.write_text(business("a", "Restaurants") + "\n" + business("b", "Dentists") + "\n")
    assert len(build_database(f"yelp:{yelp}", tmp_path / "y.sqlite")) == 1


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("osm:berlin.pbf", "unknown POI source"),
        ("yelp:", "unknown POI source"),
        ("yelp:/no/such/business.json", "Yelp business file not found"),
        ("multiwoz:/no/such/dir", "MultiWOZ directory not found"),
    ],
)
def test_build_database_errors(source: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=message):
        build_database(source, tmp_path / "x.sqlite")
    assert not (tmp_path / "x.sqlite").exists()


def test_build_database_from_empty_source_errors(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(business("d", "Dentists") + "\n")
    with pytest.raises(ValueError, match="no usable venues"):
        build_database(f"yelp:{empty}", tmp_path / "x.sqlite")


def test_open_pois_opens_each_source_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STELLAR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("stellar.usecases.navi.sources._open", {})
    multiwoz = open_pois("multiwoz")
    assert open_pois("multiwoz") is multiwoz
    assert len(multiwoz) == 232 and multiwoz.source == f"multiwoz:{PACKAGED_MULTIWOZ.resolve()}"
    assert [p.name[:19] for p in tmp_path.iterdir()] == ["navi-pois-multiwoz-"]
