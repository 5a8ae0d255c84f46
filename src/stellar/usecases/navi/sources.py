"""Venue sources by name, each built once into a cached POI database.

Sources: ``generated`` (the reproducible synthetic city, default), ``multiwoz`` (the real
Cambridge venues of MultiWOZ shipped with the package, MIT licence), ``multiwoz:DIR`` and
``yelp:FILE`` (the public Yelp business JSON lines file).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from pathlib import Path

from stellar.paths import cache_root
from stellar.usecases.navi.city import GENERATOR_VERSION, generate_pois
from stellar.usecases.navi.multiwoz import load_multiwoz
from stellar.usecases.navi.poi import POIDataError
from stellar.usecases.navi.store import POIDatabase
from stellar.usecases.navi.yelp import load_yelp

log = logging.getLogger(__name__)

PACKAGED_MULTIWOZ = Path(__file__).parent / "data" / "multiwoz"
_open: dict[str, POIDatabase] = {}
_lock = threading.Lock()


def open_pois(source: str = "generated") -> POIDatabase:
    """The database for ``source``, built into the cache folder on first use."""
    with _lock:
        if source not in _open:
            _open[source] = _build(source)
        return _open[source]


def export_pois(path: str | Path, pois: str = "generated") -> int:
    """Write the venues of ``pois`` as a JSON list (the shape of ``response.schema.json``,
    plus id and coordinates), for loading into one's own system; returns how many."""
    venues = [
        {"id": p.id, **p.to_dict(), "lat": p.lat, "lon": p.lon} for p in open_pois(pois).all()
    ]
    Path(path).write_text(json.dumps(venues, ensure_ascii=False, indent=1), encoding="utf-8")
    return len(venues)


def _build(source: str) -> POIDatabase:
    if source == "generated":
        return default_database()
    if source == "multiwoz":
        source = f"multiwoz:{PACKAGED_MULTIWOZ}"
    kind, _, location = source.partition(":")
    if location:
        source = f"{kind}:{Path(location).expanduser().resolve()}"
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    path = default_cache_path().with_name(f"navi-pois-{kind}-{digest}.sqlite")
    path.parent.mkdir(parents=True, exist_ok=True)
    return build_database(source, path)


def default_cache_path(seed: int = 0) -> Path:
    """Where :func:`default_database` keeps the generated database (the cache root)."""
    return cache_root() / f"navi-pois-seed{seed}-v{GENERATOR_VERSION}.sqlite"


def _generated_source(seed: int) -> str:
    return f"generated:seed={seed}:v{GENERATOR_VERSION}"


def default_database(path: Path | None = None, seed: int = 0) -> POIDatabase:
    """The generated database for ``seed``: built once (atomically) at ``path``, then reopened.

    A file at ``path`` that is not a POI database or came from another source is rebuilt.
    """
    path = default_cache_path(seed) if path is None else Path(path)
    source = _generated_source(seed)
    if path.is_file():
        try:
            database = POIDatabase.open(path)
        except POIDataError:
            log.warning("rebuilding unreadable POI cache %s", path)
        else:
            if database.source == source:
                return database
            database.close()
    return POIDatabase.create(path, generate_pois(seed), source=source)


def build_database(source: str, path: str | os.PathLike[str], seed: int = 0) -> POIDatabase:
    """Build a database at ``path`` from ``"generated"``, ``"multiwoz:DIR"`` or ``"yelp:FILE"``.

    Raises :class:`POIDataError` (a ValueError) for an unknown source, a missing file or
    directory, or a source without any usable POI.
    """
    kind, _, location = source.partition(":")
    if source == "generated":
        pois, source = generate_pois(seed), _generated_source(seed)
    elif kind == "multiwoz" and location:
        if not Path(location).is_dir():
            raise POIDataError(f"MultiWOZ directory not found: {location}")
        pois = load_multiwoz(location)
    elif kind == "yelp" and location:
        if not Path(location).is_file():
            raise POIDataError(f"Yelp business file not found: {location}")
        pois = load_yelp(location)
    else:
        raise POIDataError(
            f"unknown POI source {source!r}; expected 'generated', 'multiwoz:DIR' or 'yelp:FILE'"
        )
    if not pois:
        raise POIDataError(f"POI source {source!r} contains no usable venues")
    return POIDatabase.create(path, pois, source=source)
