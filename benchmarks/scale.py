"""scale: per-person costs and the optimizer's sweep as the site grows (PostgreSQL).

The site grows to 1,000, 10,000 and 100,000 people (``AGENT_MEMORY_BENCH_SCALE`` names other
sizes, e.g. ``1000,10000`` while developing), each with ten notes, filled with ``COPY`` and kept
consistent with the counters in ``MemoryUserLock``. About a tenth of them are due for the
optimizer, a fifth more were active since their last success but are not due yet, and every
person has an old merge run whose text is already erased (what a site that has run for months
keeps), a few hundred of them recent with text and snapshots.

At each size, for a person with 100 notes: create, update, delete, search, ``begin_turn``
and ``GET memory`` (the API view), in milliseconds and queries per call; and one sweep
(``agent_memory.tasks.sweep``, the ORM broker on the same database): its time and
query count, the queued tasks, and the ``EXPLAIN`` plans of its due query and its purges.

A site that stays at the smallest size lives on a second database (alias ``reference``), and
every call is timed alternately for a person of the grown site and for one of that small site,
so a moment when the machine is slow falls on both: the growth at 100,000 people is each call
against the same call at 1,000 measured beside it, not minutes earlier (at the smallest size
the two sites are alike, and their ratio shows the method's own spread).
"""

from __future__ import annotations

import datetime as dt
import io
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from .environment import Environment
from .people import fill, make_person, notes
from .report import Row, ms, times

SIZES = (1_000, 10_000, 100_000)
SMOKE_SIZES = (200, 400)
NOTES_EACH = 10
#: Notes of the person whose calls are measured.
MEASURED_NOTES = 100
ALIAS = "postgresql"
#: Targets of issue 29: one sweep at the largest size, and per-person growth.
SWEEP_SECONDS, SWEEP_QUERIES, GROWTH = 2.0, 200, 1.2


def sizes(smoke: bool) -> tuple[int, ...]:
    given = os.environ.get("AGENT_MEMORY_BENCH_SCALE", "")
    if smoke:
        return SMOKE_SIZES
    if given:
        return tuple(int(part) for part in given.split(",") if part.strip())
    return SIZES


def run(env: Environment, *, smoke: bool = False) -> list[Row]:
    if not env.has_postgres:
        return [Row("scale", "needs PostgreSQL", "-", ok=None)]
    import logging

    from django.conf import settings
    from django.db import connections
    from django.test.utils import override_settings

    logging.getLogger("django-q").setLevel(logging.WARNING)  # one line per queued task
    store = {"BACKEND": "agent_memory.stores.orm.DjangoStore", "OPTIONS": {"using": ALIAS}}
    config = {**settings.AGENT_MEMORY, "STORE": store, "OPTIMIZER": {}, "EMBEDDINGS": False}
    rows: list[Row] = []
    figures: dict[int, dict[str, Any]] = {}
    with override_settings(AGENT_MEMORY=config), _broker_on(ALIAS):
        filled = 0
        if env.reference:
            # The small site, measured beside the grown one at every size; its people's ids
            # far from the grown site's, so that nothing keyed by a person's id is shared.
            with connections[env.reference].cursor() as cursor:
                cursor.execute("SELECT setval(pg_get_serial_sequence('auth_user', 'id'), 10000000)")
            make_person(env.reference, "first-of-the-small-site")
            _grow(0, sizes(smoke)[0], env.reference)
        for size in sizes(smoke):
            _grow(filled, size)
            filled = size
            figures[size] = measure(size, 10 if smoke else 60, env.reference)
            rows.extend(_rows(size, figures[size], sizes(smoke)[0]))
    rows.extend(_growth_rows(figures, sizes(smoke)[0]))
    rows.extend(_memory_rows(env, smoke))
    return rows


#: A worker's RSS after warm_up() and 1,000 searches (issue 29).
RSS_MB = 220


def _memory_rows(env: Environment, smoke: bool) -> list[Row]:
    from .worker_memory import SEARCHES, run_in_process

    searches = 20 if smoke else SEARCHES
    figures = run_in_process(env.folder, searches, 4 if smoke else 40)
    rows = []
    for stage, values in figures.items():
        last = stage == f"after {searches} searches"
        rows.append(
            Row(
                "scale",
                f"worker RSS {stage}" if stage.startswith("after") else f"worker RSS after {stage}",
                f"{values['VmRSS']:.0f} MB",
                f"anonymous {values['RssAnon']:.0f} MB, file {values['RssFile']:.0f} MB",
                target=f"<= {RSS_MB} MB" if last else "",
                ok=values["VmRSS"] <= RSS_MB if last else None,
                figures=values,
            )
        )
    return rows


class _broker_on:
    """django-q2's ORM broker on ``alias`` for the sweep (its queue beside the app's tables)."""

    def __init__(self, alias: str) -> None:
        self.alias = alias

    def __enter__(self) -> None:
        from django_q.conf import Conf

        self.before = Conf.ORM
        Conf.ORM = self.alias

    def __exit__(self, *exc: object) -> None:
        from django_q.conf import Conf

        Conf.ORM = self.before


# --- filling ---------------------------------------------------------------------------------


def _copy(alias: str, table: str, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
    from django.db import connections

    with connections[alias].cursor() as cursor:
        with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)


def _grow(start: int, end: int, alias: str = ALIAS) -> None:
    """People ``start`` … ``end - 1`` on ``alias``: users, notes, counters, optimizer states,
    runs."""
    import json

    from django.db import connections, transaction

    from agent_memory.rules import text_digest

    now = dt.datetime.now(dt.UTC)
    texts = notes(NOTES_EACH, 120, seed=3)
    chunk = 10_000
    for low in range(start, end, chunk):
        high = min(end, low + chunk)
        with transaction.atomic(using=alias):
            with connections[alias].cursor() as cursor:
                cursor.execute("SELECT COALESCE(MAX(id), 0) FROM auth_user")
                first = cursor.fetchone()[0] + 1
            users = [
                ("!", False, f"scale-{n}", "", "", "", False, True, now) for n in range(low, high)
            ]
            _copy(
                alias,
                "auth_user",
                [
                    "password",
                    "is_superuser",
                    "username",
                    "first_name",
                    "last_name",
                    "email",
                    "is_staff",
                    "is_active",
                    "date_joined",
                ],
                users,
            )
            ids = range(first, first + len(users))
            note_rows, locks, states, runs = [], [], [], []
            for user_id in ids:
                chars = 0
                for number, item in enumerate(texts):
                    content = f"{item['content'][:-8]} #{user_id}.{number}."
                    chars += len(content)
                    at = now - dt.timedelta(days=number)
                    note_rows.append(
                        (
                            user_id,
                            json.dumps(item["categories"]),
                            content,
                            1,
                            "agent",
                            "agent",
                            at,
                            at,
                            False,
                            "",
                            text_digest(content),
                        )
                    )
                locks.append((user_id, NOTES_EACH, NOTES_EACH, chars, True))
                kind = user_id % 10
                if kind == 0:  # due: active since the last success, next run passed
                    state = (now - dt.timedelta(hours=2), now - dt.timedelta(days=2))
                    next_run = now - dt.timedelta(minutes=10)
                elif kind in (1, 2):  # active since the last success, next run later
                    state = (now - dt.timedelta(hours=2), now - dt.timedelta(hours=5))
                    next_run = now + dt.timedelta(hours=19)
                else:  # nothing new since the last success
                    state = (now - dt.timedelta(days=3), now - dt.timedelta(days=1))
                    next_run = now + dt.timedelta(hours=1)
                states.append((user_id, 0, next_run, state[1], state[0], "default", ""))
                finished = now - dt.timedelta(days=60 + user_id % 30)
                runs.append(
                    (
                        user_id,
                        "succeeded",
                        "default",
                        finished,
                        finished,
                        finished,
                        json.dumps({"schema": 1, "erased": True}),
                        "[]",
                        "[]",
                        "[]",
                        "",
                        1,
                    )
                )
            _copy(
                alias,
                "agent_memory_memorynote",
                [
                    "user_id",
                    "categories",
                    "content",
                    "version",
                    "source",
                    "created_by",
                    "created_at",
                    "updated_at",
                    "pinned",
                    "origin",
                    "text_key",
                ],
                note_rows,
            )
            _copy(
                alias,
                "agent_memory_memoryuserlock",
                ["user_id", "writes", "note_count", "total_chars", "memory_enabled"],
                locks,
            )
            _copy(
                alias,
                "agent_memory_optimizerstate",
                [
                    "user_id",
                    "consecutive_failures",
                    "next_run_at",
                    "last_success_at",
                    "last_activity_at",
                    "model",
                    "notes_fingerprint",
                ],
                states,
            )
            _copy(
                alias,
                "agent_memory_mergerun",
                [
                    "user_id",
                    "status",
                    "model",
                    "started_at",
                    "lease_expires_at",
                    "finished_at",
                    "proposals",
                    "applied",
                    "rejected",
                    "reverted",
                    "error",
                    "schema_version",
                ],
                runs,
            )
    _recent_runs(start, end, now, alias)
    with connections[alias].cursor() as cursor:
        cursor.execute("ANALYZE")


def _recent_runs(start: int, end: int, now: dt.datetime, alias: str) -> None:
    """One in ten new people has a recent applied merge: a run with text and its snapshot."""
    from agent_memory.models import MergedNoteSnapshot, MergeRun

    people = list(
        MergeRun.objects.using(alias)
        .filter(user__username__in=[f"scale-{n}" for n in range(start, end, 10)])
        .values_list("user_id", flat=True)
    )
    at = now - dt.timedelta(days=2)
    runs = MergeRun.objects.using(alias).bulk_create(
        MergeRun(
            user_id=user_id,
            status="succeeded",
            model="default",
            started_at=at,
            lease_expires_at=at,
            finished_at=at,
            proposals={"schema": 1, "groups": [{"ids": [1, 2], "content": "x"}]},
        )
        for user_id in people
    )
    MergedNoteSnapshot.objects.using(alias).bulk_create(
        MergedNoteSnapshot(
            run=run,
            user_id=run.user_id,
            group_index=0,
            merged_note_id=0,
            merged_version=1,
            sources={"schema": 1, "notes": []},
            created_at=at,
        )
        for run in runs
    )


# --- measuring ------------------------------------------------------------------------------


class _Person:
    """A person with :data:`MEASURED_NOTES` notes on one database, and the calls measured for
    them: each a ``(call, between)`` pair, ``between`` (untimed, or ``None``) undoing or
    preparing what the next call needs."""

    def __init__(self, alias: str, username: str, seed: int) -> None:
        from rest_framework.test import APIRequestFactory

        from agent_memory import LongTermMemory
        from agent_memory.api.views import MemoryViewSet
        from agent_memory.stores.orm import DjangoStore

        self.alias = alias
        self.memory = memory = LongTermMemory(store=DjangoStore(using=alias))
        self.person = make_person(alias, username)
        fill(memory, self.person.pk, notes(MEASURED_NOTES - 1, 120, seed=seed))
        self._numbers = iter(range(10**9))
        self._made: list[Any] = []
        # The first note for the delete to take (each one deleted is made again, untimed).
        self._spare = [self._saved()]
        self._target = memory.notes(self.person)[-1]
        # The API's list view on this person's database, through its own hook for the memory.
        view = type("View", (MemoryViewSet,), {"get_memory": lambda _view: memory})
        self._list = view.as_view({"get": "notes"})
        self._requests = APIRequestFactory(SERVER_NAME="localhost")

    def calls(self) -> dict[str, tuple[Callable[[], object], Callable[[], object] | None]]:
        made, spare = self._made, self._spare
        return {
            "create": (lambda: made.append(self._saved()), lambda: self._remove(made)),
            "update": (self._update, None),
            "delete": (lambda: self._remove(spare), lambda: spare.append(self._saved())),
            "search": (lambda: self.memory.search(self.person, "billing service"), None),
            "begin_turn": (lambda: self.memory.begin_turn(self.person, None), None),
            "GET memory": (self._get_memory, None),
        }

    def _saved(self) -> Any:
        return self.memory.create_notes(self.person, [_new(next(self._numbers))])[0]

    def _remove(self, notes: list[Any]) -> None:
        note = notes.pop()
        self.memory.delete_note(self.person, note.id, note.version)

    def _update(self) -> None:
        note, number = self._target, next(self._numbers)
        self._target = self.memory.update_note(
            self.person,
            note.id,
            note.version,
            list(note.categories),
            f"{note.content[:60]} {number}",
        )

    def _get_memory(self) -> None:
        from rest_framework.test import force_authenticate

        request = self._requests.get("/api/chat/memory")
        force_authenticate(request, user=self.person)
        answer = self._list(request)
        answer.render()
        assert answer.status_code == 200, answer.content


def _timed(
    grown: _Person, small: _Person | None, name: str, repeat: int
) -> tuple[float, int, float | None]:
    """Median seconds of the call ``name`` for the person of the grown site, its queries, and
    (with a person of the small site) the median of the same call for them, the two called
    alternately so that the machine's own slow moments fall on both alike."""
    from django.db import connections
    from django.test.utils import CaptureQueriesContext

    people = [grown, *filter(None, [small])]
    sides = [(person.alias, *person.calls()[name]) for person in people]
    for _ in range(10):
        for _alias, call, between in sides:
            call()
            if between:
                between()
    spent: list[list[float]] = [[] for _ in sides]
    queries = 0
    for index in range(repeat):
        order = list(enumerate(sides))
        for side, (alias, call, between) in order if index % 2 == 0 else order[::-1]:
            with CaptureQueriesContext(connections[alias]) as captured:
                begun = time.perf_counter()
                call()
                spent[side].append(time.perf_counter() - begun)
            if index == 0 and side == 0:
                queries = len(captured.captured_queries)
            if between:
                between()
    medians = [statistics.median(times) for times in spent]
    return medians[0], queries, medians[1] if small else None


def measure(size: int, repeat: int, reference: str | None) -> dict[str, Any]:
    """Each call for a person with :data:`MEASURED_NOTES` notes on the grown site of ``size``
    people (and beside it, with ``reference``, for one on the small site); then one sweep."""
    grown = _Person(ALIAS, f"measured-{size}", seed=size)
    small = _Person(reference, f"measured-beside-{size}", seed=size) if reference else None
    figures: dict[str, Any] = {name: _timed(grown, small, name, repeat) for name in OPERATIONS}
    figures["sweep"] = _sweep()
    return figures


def _new(number: int) -> dict[str, Any]:
    return {"categories": ["Work"], "content": f"Measured note number {number} about the queue."}


def _sweep() -> dict[str, Any]:
    from django.db import connections
    from django.test.utils import CaptureQueriesContext
    from django_q.models import OrmQ

    from agent_memory import tasks
    from agent_memory.models import OptimizerState
    from agent_memory.optimizer import runner

    OrmQ.objects.using(ALIAS).all().delete()
    due = OptimizerState.objects.using(ALIAS).filter(next_run_at__lte=runner.now()).count()
    plans = _plans()
    from django.core.cache import cache

    cache.clear()  # the purge runs (it runs at most hourly)
    with CaptureQueriesContext(connections[ALIAS]) as captured:
        begun = time.perf_counter()
        enqueued = tasks.sweep(using=ALIAS)
        spent = time.perf_counter() - begun
    queued = OrmQ.objects.using(ALIAS).count()
    with CaptureQueriesContext(connections[ALIAS]) as again:
        begun = time.perf_counter()
        tasks.sweep(using=ALIAS)  # within the hour: no purge
        second = time.perf_counter() - begun
    OrmQ.objects.using(ALIAS).all().delete()
    return {
        "seconds": spent,
        "queries": len(captured.captured_queries),
        "enqueued": enqueued,
        "due": due,
        "tasks": queued,
        "seconds_without_purge": second,
        "queries_without_purge": len(again.captured_queries),
        "plans": plans,
    }


def _plans() -> dict[str, str]:
    """``EXPLAIN`` of the due query and the two purges, as the sweep sends them."""
    from django.db import connections

    from agent_memory.models import ERASED_RUN_PROPOSALS, MergedNoteSnapshot, MergeRun
    from agent_memory.optimizer import runner
    from agent_memory.stores.orm import DjangoStore

    store = DjangoStore(using=ALIAS)
    cutoff = runner._retention_cutoff()
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connections[ALIAS]) as captured:
        store.due_optimizer_users(runner.now())
    (due_sql,) = (query["sql"] for query in captured.captured_queries)
    plans = {}
    with connections[ALIAS].cursor() as cursor:
        for name, sql, params in (
            ("due", due_sql, None),
            (
                "snapshot purge",
                *MergedNoteSnapshot.objects.using(ALIAS)
                .filter(created_at__lt=cutoff)
                .values("pk")
                .query.sql_with_params(),
            ),
            (
                "run purge",
                *MergeRun.objects.using(ALIAS)
                .exclude(proposals=ERASED_RUN_PROPOSALS)
                .filter(finished_at__lt=cutoff)
                .query.sql_with_params(),
            ),
        ):
            cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {sql}", params)
            plans[name] = "\n".join(line for (line,) in cursor.fetchall())
    return plans


# --- rows -----------------------------------------------------------------------------------

OPERATIONS = ("create", "update", "delete", "search", "begin_turn", "GET memory")


def _rows(size: int, figures: dict[str, Any], small: int) -> list[Row]:
    rows = []
    for name in OPERATIONS:
        seconds, queries, beside = figures[name]
        rows.append(
            Row(
                "scale",
                f"{name} at {size:,} people",
                ms(seconds),
                f"{queries} queries"
                + ("" if beside is None else f"; {ms(beside)} at {small:,} people beside it"),
                "" if beside is None else times(seconds / beside),
                figures={
                    "seconds": seconds,
                    "queries": queries,
                    "people": size,
                    "beside_seconds": beside,
                    "beside_people": small,
                },
            )
        )
    sweep = figures["sweep"]
    largest = size >= 100_000
    rows.append(
        Row(
            "scale",
            f"sweep at {size:,} people ({sweep['due']:,} due, {sweep['tasks']} tasks)",
            f"{sweep['seconds']:.2f} s",
            f"{sweep['queries']} queries",
            target=f"<= {SWEEP_SECONDS:.0f} s, <= {SWEEP_QUERIES} queries" if largest else "",
            ok=(sweep["seconds"] <= SWEEP_SECONDS and sweep["queries"] <= SWEEP_QUERIES)
            if largest
            else None,
            figures={key: value for key, value in sweep.items()},
        )
    )
    buffer = io.StringIO()
    for name, plan in sweep["plans"].items():
        print(f"-- EXPLAIN {name} at {size:,} people\n{plan}", file=buffer)
    print(buffer.getvalue())
    return rows


def _growth_rows(figures: dict[int, dict[str, Any]], small: int) -> list[Row]:
    """Per-person growth: each call at the largest size against the same call for a person of
    the small site, measured beside it (without a small site: against the smallest size,
    measured earlier)."""
    large = max(figures)
    rows = []
    for name in OPERATIONS:
        seconds, _, beside = figures[large][name]
        if beside is None:
            if len(figures) < 2:
                return []
            beside, small = figures[min(figures)][name][0], min(figures)
        ratio = seconds / beside
        rows.append(
            Row(
                "scale",
                f"{name}: {large:,} people vs {small:,}",
                ms(seconds),
                ms(beside),
                times(ratio),
                f"<= {GROWTH}x",
                ok=ratio <= GROWTH,
                figures={"ratio": ratio},
            )
        )
    return rows
