"""Throwaway databases for one benchmark run, and the timing helpers every benchmark uses.

A run gets its own SQLite file in a temporary folder and, when a PostgreSQL server answers, its
own database ``agent_memory_bench_<pid>`` on it; both are migrated at the start and removed at
the end, so a run never touches the example project's or the tests' data and two runs can go
side by side.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

#: The PostgreSQL server to create the benchmark database on (any database name is ignored).
DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432/postgres"
#: The variables that name the run's PostgreSQL databases to ``benchmarks.settings``.
_POSTGRES, _REFERENCE = "AGENT_MEMORY_BENCH_POSTGRES", "AGENT_MEMORY_BENCH_REFERENCE"


@dataclass
class Environment:
    """Where this run's data lives."""

    sqlite_path: str
    postgres_url: str | None
    folder: str
    aliases: list[str] = field(default_factory=list)
    #: The alias of a second PostgreSQL database on the same server, if one was asked for.
    reference: str | None = None

    @property
    def has_postgres(self) -> bool:
        return self.postgres_url is not None


def _server_url() -> str:
    return os.environ.get("AGENT_MEMORY_BENCH_SERVER", DEFAULT_SERVER)


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def _admin_connection(url: str):  # type: ignore[no-untyped-def]
    import psycopg

    conninfo = _with_database(url, "postgres").replace("postgres://", "postgresql://", 1)
    return psycopg.connect(conninfo, autocommit=True, connect_timeout=3)


def postgres_available() -> bool:
    """Whether the PostgreSQL server answers."""
    try:
        with _admin_connection(_server_url()):
            return True
    except Exception:
        return False


@contextlib.contextmanager
def prepared(use_postgres: bool = True, *, reference: bool = False) -> Iterator[Environment]:
    """Create the databases, point ``benchmarks.settings`` at them, set Django up, migrate.

    With ``reference``, PostgreSQL gets a second database (alias ``reference``, not among
    :attr:`Environment.aliases`): a site that stays small while ``scale`` grows the other.
    """
    folder = tempfile.mkdtemp(prefix="agent-memory-bench-")
    sqlite_path = os.path.join(folder, "bench.sqlite3")
    server = _server_url()
    name = f"agent_memory_bench_{os.getpid()}"
    # The PostgreSQL databases of this run, by the variable that names them to the settings.
    databases: dict[str, str] = {}
    if use_postgres and postgres_available():
        databases[_POSTGRES] = name
        if reference:
            databases[_REFERENCE] = f"{name}_reference"
        with _admin_connection(server) as admin:
            for each in databases.values():
                admin.execute(f'DROP DATABASE IF EXISTS "{each}"')
                admin.execute(f'CREATE DATABASE "{each}"')
    os.environ["AGENT_MEMORY_BENCH_SQLITE"] = sqlite_path
    for variable in (_POSTGRES, _REFERENCE):
        if variable in databases:
            os.environ[variable] = _with_database(server, databases[variable])
        else:
            os.environ.pop(variable, None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
    postgres_url = os.environ.get(_POSTGRES)
    env = Environment(sqlite_path=sqlite_path, postgres_url=postgres_url, folder=folder)
    try:
        import django
        from django.core.management import call_command

        django.setup()
        env.aliases = ["default"] + (["postgresql"] if postgres_url else [])
        env.reference = "reference" if _REFERENCE in databases else None
        for alias in [*env.aliases, *filter(None, [env.reference])]:
            call_command("migrate", database=alias, verbosity=0, interactive=False)
        yield env
    finally:
        with contextlib.suppress(Exception):
            from django.db import connections

            connections.close_all()
        if databases:
            with _admin_connection(server) as admin:
                for each in databases.values():
                    admin.execute(f'DROP DATABASE IF EXISTS "{each}" WITH (FORCE)')
        shutil.rmtree(folder, ignore_errors=True)


def label(alias: str) -> str:
    """The database's name in the table."""
    return {"default": "SQLite", "postgresql": "PostgreSQL"}.get(alias, alias)


def measure_pair(
    ours: Callable[[], object],
    floor: Callable[[], object],
    repeat: int,
    *,
    warmup: int = 5,
    between: Callable[[], object] | None = None,
) -> tuple[float, float]:
    """Median seconds of ``ours`` and ``floor``, called alternately so noise hits both alike.

    ``between`` runs untimed after each pair (to undo what the pair wrote).
    """
    for _ in range(warmup):
        ours()
        floor()
        if between:
            between()
    ours_times: list[float] = []
    floor_times: list[float] = []
    for index in range(repeat):
        # Swap the order every other round: neither side always runs on a warm cache.
        pair = ((ours, ours_times), (floor, floor_times))
        for call, times in pair if index % 2 == 0 else pair[::-1]:
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        if between:
            between()
    return statistics.median(ours_times), statistics.median(floor_times)
