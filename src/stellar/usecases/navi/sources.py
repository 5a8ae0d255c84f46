"""Opening the POI database of a run by source name, once per process.

Sources: ``generated`` (the reproducible synthetic city, default), ``multiwoz`` (the real
Cambridge venues of MultiWOZ shipped with the package, MIT licence), ``multiwoz:DIR`` and
``yelp:FILE`` (the public Yelp business JSON lines file).
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from stellar.usecases.navi.poidb import (
    POIDatabase,
    build_database,
    default_cache_path,
    default_database,
)

PACKAGED_MULTIWOZ = Path(__file__).parent / "data" / "multiwoz"
_open: dict[str, POIDatabase] = {}
_lock = threading.Lock()


def open_pois(source: str = "generated") -> POIDatabase:
    """The database for ``source``, built into the cache folder on first use."""
    with _lock:
        if source not in _open:
            _open[source] = _build(source)
        return _open[source]


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
