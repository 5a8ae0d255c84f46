"""The POI database: POIs in one SQLite file, answering venue requests.

Requests follow the semantics of :class:`~stellar.usecases.navi.request.VenueRequest`; in
SQL an unknown attribute (NULL) fails every comparison, so it never satisfies a constraint.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

from stellar.usecases.navi.poi import POI, POIDataError
from stellar.usecases.navi.request import VenueRequest

FORMAT = "stellar-navi-pois/1"
_COLUMNS = tuple(field.name for field in fields(POI))
_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pois (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    cuisine TEXT,
    rating REAL,
    price TEXT,
    payment TEXT NOT NULL,  -- ',cash,credit card,': every method enclosed in commas
    parking INTEGER,        -- 1, 0 or NULL (unknown)
    address TEXT NOT NULL,
    lat REAL NOT NULL,
    lon REAL NOT NULL
);
CREATE INDEX pois_category ON pois (category, cuisine);
"""
_ORDER = "ORDER BY rating IS NULL, rating DESC, id"


def _to_row(poi: POI) -> tuple[Any, ...]:
    payment = "," + "".join(f"{method}," for method in poi.payment)
    parking = None if poi.parking is None else int(poi.parking)
    return (
        poi.id,
        poi.name,
        poi.category,
        poi.cuisine,
        poi.rating,
        poi.price,
        payment,
        parking,
        poi.address,
        poi.lat,
        poi.lon,
    )


def _from_row(row: tuple[Any, ...]) -> POI:
    values = dict(zip(_COLUMNS, row, strict=True))
    values["payment"] = tuple(m for m in values["payment"].split(",") if m)
    values["parking"] = None if values["parking"] is None else bool(values["parking"])
    return POI(**values)


def _where(request: VenueRequest) -> tuple[str, list[Any]]:
    """SQL condition and parameters of a request."""
    clauses, params = ["category = ?"], [request.category]
    optional = (
        ("cuisine = ?", request.cuisine),
        ("rating >= ?", request.min_rating),
        ("price = ?", request.price),
        ("instr(payment, ',' || ? || ',') > 0", request.payment),
        ("parking = ?", None if request.parking is None else int(request.parking)),
    )
    for clause, value in optional:
        if value is not None:
            clauses.append(clause)
            params.append(value)
    return " AND ".join(clauses), params


class POIDatabase:
    """A read-only view of a POI SQLite file, safe to share between threads.

    The connection is opened with ``mode=ro`` and ``check_same_thread=False``; a lock
    serialises the (sub-millisecond) queries. Several processes may open the same file.
    """

    def __init__(self, path: Path, connection: sqlite3.Connection, source: str) -> None:
        self.path = path
        self.source = source
        self._connection = connection
        self._lock = threading.Lock()

    @classmethod
    def create(
        cls, path: str | os.PathLike[str], pois: Iterable[POI], *, source: str = "custom"
    ) -> POIDatabase:
        """Write ``pois`` to a new file at ``path`` (replacing it atomically) and open it."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.close(fd)
        try:
            _write_database(Path(temp_name), list(pois), source)
            os.replace(temp_name, path)
        except BaseException:
            Path(temp_name).unlink(missing_ok=True)
            raise
        return cls.open(path)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> POIDatabase:
        """Open an existing POI database read-only; :class:`POIDataError` if it is not one."""
        path = Path(path)
        if not path.is_file():
            raise POIDataError(f"POI database not found: {path}")
        uri = f"{path.resolve().as_uri()}?mode=ro"
        connection = sqlite3.connect(uri, uri=True, check_same_thread=False)
        try:
            meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
            connection.execute("SELECT id FROM pois LIMIT 1").fetchall()
        except sqlite3.DatabaseError as error:
            connection.close()
            raise POIDataError(f"{path} is not a STELLAR POI database ({error})") from None
        if meta.get("format") != FORMAT:
            connection.close()
            found = meta.get("format")
            raise POIDataError(f"{path} is not a STELLAR POI database (format {found!r})")
        return cls(path, connection, meta.get("source", "unknown"))

    def close(self) -> None:
        self._connection.close()

    def __enter__(self) -> POIDatabase:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _fetch(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._connection.execute(sql, tuple(params)).fetchall()

    def __len__(self) -> int:
        return self._fetch("SELECT count(*) FROM pois")[0][0]

    def __iter__(self) -> Iterator[POI]:
        return iter(self.all())

    def all(self) -> list[POI]:
        """Every POI, by id."""
        rows = self._fetch(f"SELECT {', '.join(_COLUMNS)} FROM pois ORDER BY id")
        return [_from_row(row) for row in rows]

    def get(self, poi_id: int) -> POI | None:
        """The POI with this id, or None."""
        rows = self._fetch(f"SELECT {', '.join(_COLUMNS)} FROM pois WHERE id = ?", (poi_id,))
        return _from_row(rows[0]) if rows else None

    def query(self, request: VenueRequest, limit: int | None = 5) -> list[POI]:
        """POIs satisfying ``request``, best rated first (unrated last, ties by id); at most
        ``limit`` (``None``: all)."""
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be >= 0 or None, not {limit}")
        where, params = _where(request)
        sql = f"SELECT {', '.join(_COLUMNS)} FROM pois WHERE {where} {_ORDER} LIMIT ?"
        rows = self._fetch(sql, [*params, -1 if limit is None else limit])
        return [_from_row(row) for row in rows]

    def satisfiable(self, request: VenueRequest) -> bool:
        """Whether any POI satisfies ``request``."""
        where, params = _where(request)
        return bool(self._fetch(f"SELECT 1 FROM pois WHERE {where} LIMIT 1", params))


def _write_database(path: Path, pois: list[POI], source: str) -> None:
    """Create the schema in the empty file at ``path`` and insert ``pois``."""
    ids = Counter(poi.id for poi in pois)
    duplicates = sorted(i for i, count in ids.items() if count > 1)
    if duplicates:
        raise ValueError(f"duplicate POI ids: {duplicates[:10]}")
    connection = sqlite3.connect(path)
    try:
        with connection:
            connection.executescript(_SCHEMA)
            meta = {"format": FORMAT, "source": source, "count": str(len(pois))}
            connection.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
            placeholders = ", ".join("?" * len(_COLUMNS))
            connection.executemany(
                f"INSERT INTO pois VALUES ({placeholders})", (_to_row(p) for p in pois)
            )
    finally:
        connection.close()
