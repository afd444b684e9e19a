"""The benchmarks run end to end with tiny sizes (``python -m benchmarks --smoke``).

Timings of a smoke run mean nothing and are not checked. What is checked does not depend on the
machine: every benchmark ran, the cache benchmark's character counts (the full scripted chat,
it is cheap) stay under 5%, and the load run through gunicorn had no unexpected answer and left
every person's invariants intact.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.environment import postgres_available

from . import processes

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(os.environ.get("DATABASE_URL")),
        reason="the smoke run makes its own SQLite and PostgreSQL databases: once is enough",
    ),
]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> dict:
    output = tmp_path_factory.mktemp("bench") / "smoke.json"
    environ = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DJANGO_SETTINGS_MODULE", "AGENT_MEMORY_TEST_DB")
    }
    # Its own process group (the load benchmark starts gunicorn), killed whatever happens.
    with processes.running(
        [
            (
                [sys.executable, "-m", "benchmarks", "--smoke", "--output", str(output)],
                {
                    "cwd": ROOT,
                    "env": environ,
                    "stdout": subprocess.PIPE,
                    "stderr": subprocess.PIPE,
                    "text": True,
                },
            )
        ]
    ) as (run,):
        stdout, stderr = run.communicate(timeout=600)
    assert run.returncode == 0, stderr[-4000:] + stdout[-2000:]
    assert "| benchmark" in stdout, "no table printed"
    return json.loads(output.read_text())


def rows_of(run: dict, name: str) -> list[dict]:
    return [row for row in run["rows"] if row["benchmark"] == name]


def test_every_benchmark_runs(smoke_run):
    assert smoke_run["run"]["failed"] == []
    assert smoke_run["run"]["benchmarks"] == [
        "turn",
        "tool",
        "cache",
        "load",
        "search",
        "optimizer",
        "secrets",
        "import",
        "scale",
    ]
    databases = ["SQLite", "PostgreSQL"] if postgres_available() else ["SQLite"]
    new_chat = [row for row in rows_of(smoke_run, "turn") if "database" in row["figures"]]
    assert [row["figures"]["database"] for row in new_chat] == databases
    later = rows_of(smoke_run, "turn")[-1]["figures"]
    assert later["queries"] == 1, "a later turn of a chat reads only the memory switch"
    tool = [
        row
        for row in rows_of(smoke_run, "tool")
        if "LangGraph" not in row["case"] and "anatomy" not in row["figures"]
    ]
    actions = [row["figures"]["action"] for row in tool]
    # Two sizes of memory, each on every database; the store's checked writes beside the tool's,
    # and a delete beside a checked create.
    each = ["create", "checked create", "update", "checked update", "delete", "search", "read"]
    assert actions == each * len(databases) * 2
    assert len({row["figures"].get("notes") for row in tool if "notes" in row["figures"]}) == 2
    for row in new_chat + tool:
        assert row["figures"]["ours_median_s"] > 0
        assert row["figures"].get("floor_median_s", 1) > 0


def test_cache_benchmark_resends_under_five_percent_of_the_system_prompt_design(smoke_run):
    headline = rows_of(smoke_run, "cache")[0]
    figures = headline["figures"]
    assert figures["turns"] == 60 and figures["memory_changes"] == 12
    assert len(figures["compactions"]) == 2
    assert 0 < figures["resent"]["ours"] < 0.05 * figures["resent"]["system"]
    # Ours re-sends only the changes, at the compactions: never as much as the whole block.
    assert figures["resent"]["ours"] < figures["first_block_chars"]
    assert set(figures["ours_compaction_texts"].values()) != {0}


def test_search_benchmark_measures_its_corpus_three_ways_on_every_database(smoke_run):
    rows = rows_of(smoke_run, "search")
    recall = [row["figures"] for row in rows if "kind" in row["figures"]]
    assert [figures["kind"] for figures in recall] == ["embeddings only", "hybrid", "stems only"]
    summary = recall[0]["summary"]
    # The 100 two-per-target queries and the 7 one-word ones ("boss", «кот»…).
    assert (summary["queries"], summary["russian"], summary["no_shared_stem"]) == (107, 54, 53)
    nothing = {
        row["figures"]["corpus"]: row["figures"] for row in rows if "corpus" in row["figures"]
    }
    assert (nothing["off-topic"]["queries"], nothing["held-out"]["queries"]) == (40, 10)
    assert all(0 <= nothing["off-topic"][lang] <= 1 for lang in ("en", "ru"))
    stems_only = recall[2]
    assert stems_only["no_stem_r@10"] == 0, "a query sharing no stem cannot be found by stems"
    assert recall[1]["r@10"] > stems_only["r@10"], "meaning finds what stems miss"
    latency = [row["figures"] for row in rows if "database" in row["figures"]]
    databases = ["SQLite", "PostgreSQL"] if postgres_available() else ["SQLite"]
    assert [figures["database"] for figures in latency] == databases
    assert all(figures["ours_median_s"] > 0 for figures in latency)


def test_optimizer_benchmark_sends_only_likely_duplicates_and_nothing_for_unchanged(smoke_run):
    rows = [row["figures"] for row in rows_of(smoke_run, "optimizer")]
    cost = [figures for figures in rows if "before_chars" in figures]
    assert len(cost) == 4
    for figures in cost:
        assert figures["applied"] == figures["planted_pairs"] == 10
        assert 0 < figures["after_chars"] < figures["before_chars"]
        assert figures["unchanged_chars"] == 0 and figures["second_run"] == "succeeded"
    corpus = [figures for figures in rows if "share_after" in figures]
    assert len(corpus) == 2
    assert all(figures["bad_after"] == 0 for figures in corpus)


@pytest.mark.skipif(not postgres_available(), reason="the load benchmark needs PostgreSQL")
def test_load_run_has_no_unexpected_answer_and_invariants_hold(smoke_run):
    throughput, _, errors, invariants, floor, _share = rows_of(smoke_run, "load")
    figures = throughput["figures"]
    assert figures["requests"] == figures["planned"] > 0
    assert figures["unexpected_count"] == 0, figures["unexpected"]
    assert figures["invariant_problems"] == []
    assert errors["ok"] is True and invariants["ok"] is True
    assert (
        sum(figures["succeeded"].values()) + sum(figures["expected_409"].values())
        == (figures["requests"])
    )
    # The floor ran the same mix through the same server, without an error.
    assert floor["figures"]["floor_requests"] == figures["planned"]
    assert floor["figures"]["floor_unexpected_count"] == 0
    assert floor["figures"]["floor_throughput_rps"] > 0


def test_secrets_benchmark_reports_every_corpus_and_the_cost_of_a_check(smoke_run):
    tuning, fresh, round_five, blind, per_text, first = rows_of(smoke_run, "secrets")
    for row in (tuning, fresh, round_five, blind):
        figures = row["figures"]["shipped"]
        assert figures["secrets"] >= 100 and figures["look_alikes"] >= 60
        assert "own_rules_only" in row["figures"]
    # The corpora's figures do not depend on the machine: the honest ones hold their target.
    assert fresh["ok"] is True and blind["ok"] is True
    assert per_text["figures"]["short_p50"] > 0 and first["figures"]["first_call"] > 0


def test_tool_benchmark_puts_langgraph_beside_ours_on_postgresql(smoke_run):
    if not postgres_available():
        pytest.skip("needs PostgreSQL")
    beside = [
        row
        for row in rows_of(smoke_run, "tool")
        if "LangGraph" in row["case"] and "anatomy" not in row["figures"]
    ]
    assert [row["figures"]["action"] for row in beside] == [
        *("call_tool create", "store checked create", "call_tool update", "store checked update"),
        *("bare psycopg update call", "call_tool search"),
    ] * 2
    targeted = [row for row in beside if row["figures"]["action"].startswith("store")]
    assert all(row["target"] == "<= 1.2" for row in targeted)
    assert all(row["figures"]["langgraph_median_s"] > 0 for row in beside)
    # Where pgbench is installed, the server's cost of a checked create and of a checked update,
    # part by part, each beside LangGraph's put.
    anatomy = [row["figures"] for row in rows_of(smoke_run, "tool") if "anatomy" in row["figures"]]
    if shutil.which("pgbench"):
        assert len(anatomy) == 12 and all(row["latency_s"] > 0 for row in anatomy)
        creates, updates = anatomy[:8], anatomy[8:]
        assert creates[0]["anatomy"] == "LangGraph put, prepared"
        # Our checked create as the store sends it (prepared), then as a transaction sends it.
        ours = [row["anatomy"] for row in creates[-2:]]
        assert "prepared as the store sends it" in ours[0] and "unprepared" in ours[1]
        assert updates[0]["anatomy"] == "LangGraph put of the same key, prepared"
        assert all(row["put_s"] == updates[0]["latency_s"] for row in updates)
        assert "floor of the work" in updates[2]["anatomy"]
        assert "our checked update" in updates[3]["anatomy"]


def test_scale_benchmark_times_the_sweep_and_a_workers_memory(smoke_run):
    if not postgres_available():
        pytest.skip("needs PostgreSQL")
    rows = rows_of(smoke_run, "scale")
    sweeps = [row["figures"] for row in rows if row["case"].startswith("sweep at")]
    assert [sweep["enqueued"] for sweep in sweeps] == [sweep["due"] for sweep in sweeps]
    assert all(sweep["due"] > 0 and sweep["tasks"] >= 1 for sweep in sweeps)
    assert all(set(sweep["plans"]) == {"due", "snapshot purge", "run purge"} for sweep in sweeps)
    memory = [row for row in rows if row["case"].startswith("worker RSS")]
    assert memory and all(row["figures"]["VmRSS"] > 0 for row in memory)
    # Each call at each size was timed beside the same call on the small site's database.
    calls = [row["figures"] for row in rows if "beside_seconds" in row["figures"]]
    assert len(calls) == 6 * len(sweeps)
    assert all(call["beside_seconds"] > 0 and call["beside_people"] == 200 for call in calls)
    growth = [row["case"].split(":")[0] for row in rows if " people vs " in row["case"]]
    assert growth == ["create", "update", "delete", "search", "begin_turn", "GET memory"]


def test_import_benchmark_sends_the_bounds_and_imports_one_slot_at_a_time(smoke_run):
    if not postgres_available():
        pytest.skip("needs PostgreSQL")
    rows = rows_of(smoke_run, "import")
    bounds = [row["figures"]["status"] for row in rows if "status" in row["figures"]]
    assert bounds == [400, 409]
    reads = [row["figures"] for row in rows if "refused_429" in row["figures"]]
    assert len(reads) == 2
    # The importers' imports ran (a 429 only delays one) and the reads were timed around them.
    assert all(read["imports"] > 0 and read["loaded_p99"] > 0 for read in reads)
