"""search: recall on a person's 200 notes, and what a search costs next to reading the notes.

Recall: the 100 queries of :mod:`benchmarks.search_corpus` (half Russian, about half sharing no
word with their target) and its one-word queries, each aimed at one note among 200. Recall@k is
the share of queries whose target is among the first k results. Three ways: word stems only
(``EMBEDDINGS=False``), meaning only (the notes ranked by cosine with the query), and hybrid
(``LongTermMemory.search``: both fused). The default embeddings (WordLlama and the Universal
Sentence Encoder side by side) are measured, and each of the two models alone.

Nothing found: the corpus's off-topic queries (20 English, 20 Russian, on which the relevance
floors of :data:`agent_memory.search.CALIBRATED_FLOORS` were calibrated) and its held-out ones
(5 + 5, never tuned on); the share of each language's queries that find no note at all.

Load: the default embeddings in a new process (numpy already imported, as in a Django app), the
first time (the sentence encoder built from its wheel and kept in a cache folder) and after,
and with that cache off (the encoder built from its wheel in every process): time to the first
vector and the memory then resident.

Latency: ``LongTermMemory.search`` on a person with 200 notes (vectors stored) against the floor
of reading that person's notes (``LongTermMemory.notes``), on SQLite and PostgreSQL.
"""

from __future__ import annotations

import itertools
from typing import Any

from .environment import Environment, label, measure_pair
from .people import fill, make_person
from .report import Row, ms, times
from .search_corpus import HELD_OUT, OFF_TOPIC, ONE_WORD, TARGETS, Target

#: The default (``agent_memory.conf.DEFAULTS``): WordLlama and the sentence encoder in one vector.
DEFAULT = {"BACKEND": "agent_memory.embeddings.CombinedEmbeddings", "OPTIONS": {}}
#: Each of its two models alone, for the comparison in the README.
WORDLLAMA = {"BACKEND": "agent_memory.embeddings.WordLlamaEmbeddings", "OPTIONS": {}}
MULTILINGUAL = {
    "BACKEND": "agent_memory.embeddings.UniversalSentenceEncoderEmbeddings",
    "OPTIONS": {},
}
DEFAULT_NAME = "default (WordLlama + USE v3)"


def run(env: Environment, *, smoke: bool = False) -> list[Row]:
    rows = recall_rows(DEFAULT, DEFAULT_NAME)
    if not smoke:
        rows += recall_rows(WORDLLAMA, "WordLlama alone", headline=False)
        rows += recall_rows(MULTILINGUAL, "USE v3 alone", headline=False)
    for alias in env.aliases:
        rows.append(latency_row(alias, smoke))
    rows += load_rows(smoke)
    return rows


def corpus_items() -> list[dict[str, Any]]:
    from .search_corpus import OTHERS

    return [{"categories": list(t.categories), "content": t.content} for t in TARGETS] + [
        {"categories": list(categories), "content": content} for categories, content in OTHERS
    ]


def queries(target_ids: list[int], notes_by_text: dict[str, Any]) -> list[dict[str, Any]]:
    """Every query with its target's id, language, and whether it shares a stem with it (as
    search matches words: the same stem, or the start of a longer one)."""
    from agent_memory.search import search_notes

    asked = [
        (target.lang, query, note_id, notes_by_text[target.content])
        for target, note_id in zip(TARGETS, target_ids, strict=True)
        for query in (target.with_words, target.in_other_words)
    ]
    asked += [
        (lang, query, notes_by_text[text].id, notes_by_text[text]) for lang, query, text in ONE_WORD
    ]
    found = []
    for lang, query, note_id, note in asked:
        shared = search_notes([note], query, 1).total > 0
        found.append({"query": query, "target": note_id, "lang": lang, "shares_stem": shared})
    return found


def _as_note(target: Target) -> Any:
    from agent_memory.notes import NewNote

    return NewNote(target.categories, target.content)


def _filled_memory() -> tuple[Any, list[int]]:
    from agent_memory import LongTermMemory
    from agent_memory.stores.in_memory import InMemoryStore

    memory = LongTermMemory(store=InMemoryStore(), optimizer=False)
    fill(memory, 1, corpus_items())
    # Ids are given in the order of creation, and the targets come first.
    return memory, sorted(note.id for note in memory.notes(1))[: len(TARGETS)]


def recall_rows(config: dict[str, Any], name: str, headline: bool = True) -> list[Row]:
    from django.test import override_settings

    from agent_memory import embeddings

    figures: dict[str, dict[str, float]] = {}
    with override_settings(AGENT_MEMORY={"OPTIMIZER": False, "EMBEDDINGS": config}):
        memory, ids = _filled_memory()
        notes, _, _ = embeddings.notes_and_similarities(memory.store, 1, None)
        asked = queries(ids, {note.content: note for note in notes})

        def by_meaning(query: str) -> list[int]:
            _, _, similarities = embeddings.notes_and_similarities(memory.store, 1, query)
            order = sorted(range(len(notes)), key=lambda index: -similarities[index])
            return [notes[index].id for index in order[:10]]

        figures["embeddings only"] = _recall(asked, by_meaning)
        figures["hybrid"] = _recall(
            asked, lambda query: [note.id for note in memory.search(1, query).notes]
        )
        totals = sorted(memory.search(1, item["query"]).total for item in asked)
        nothing = {
            corpus: _nothing_found(memory, corpus_queries)
            for corpus, corpus_queries in (("off-topic", OFF_TOPIC), ("held-out", HELD_OUT))
        }
    if headline:
        with override_settings(AGENT_MEMORY={"OPTIMIZER": False, "EMBEDDINGS": False}):
            figures["stems only"] = _recall(
                asked, lambda query: [note.id for note in memory.search(1, query).notes]
            )
    hybrid = figures["hybrid"]
    meets = hybrid["r@10"] >= 0.95 and hybrid["r@1"] >= 0.85 and hybrid["no_stem_r@10"] >= 0.9
    summary = {
        "queries": len(asked),
        "russian": sum(item["lang"] == "ru" for item in asked),
        "no_shared_stem": sum(not item["shares_stem"] for item in asked),
        "median_total": totals[len(totals) // 2],
        **{kind: values for kind, values in figures.items()},
    }
    rows = []
    for kind, values in figures.items():
        rows.append(
            Row(
                "search",
                f"recall, {name}: {kind}, {len(asked)} queries among 200 notes",
                f"@1 {values['r@1']:.2f}, @10 {values['r@10']:.2f}",
                f"no shared stem @10 {values['no_stem_r@10']:.2f}; ru @10 {values['ru_r@10']:.2f}",
                "",
                "hybrid @10 ≥ 0.95, @1 ≥ 0.85, no-stem @10 ≥ 0.9"
                if kind == "hybrid" and headline
                else "",
                meets if kind == "hybrid" and headline else None,
                {"embeddings": name, "kind": kind, **values, "summary": summary},
            )
        )
    for corpus, shares in nothing.items():
        calibrated = corpus == "off-topic" and headline
        rows.append(
            Row(
                "search",
                f"nothing found, {name}: {corpus} queries that find no note",
                f"en {shares['en']:.2f}, ru {shares['ru']:.2f}",
                f"{shares['queries']} queries"
                + ("" if corpus == "off-topic" else ", never tuned on"),
                "",
                "each language ≥ 0.8" if calibrated else "",
                shares["en"] >= 0.8 and shares["ru"] >= 0.8 if calibrated else None,
                {"embeddings": name, "corpus": corpus, **shares},
            )
        )
    return rows


def _nothing_found(memory: Any, asked: list[tuple[str, str]]) -> dict[str, Any]:
    """The share of ``asked`` queries, per language, that find no note; and those that do."""
    empty: dict[str, list[bool]] = {"en": [], "ru": []}
    noisy = []
    for lang, query in asked:
        total = memory.search(1, query).total
        empty[lang].append(total == 0)
        if total:
            noisy.append(query)
    return {
        "queries": len(asked),
        **{lang: round(sum(flags) / len(flags), 3) for lang, flags in empty.items()},
        "found_something": noisy,
    }


def _recall(asked: list[dict[str, Any]], ranked: Any) -> dict[str, float]:
    hits: dict[str, list[int]] = {}
    for item in asked:
        found = ranked(item["query"])
        top1, top10 = found[:1] == [item["target"]], item["target"] in found[:10]
        for group in ("all", item["lang"], "stem" if item["shares_stem"] else "no_stem"):
            hits.setdefault(f"{group}@1", []).append(top1)
            hits.setdefault(f"{group}@10", []).append(top10)

    def share(key: str) -> float:
        values = hits.get(key, [])
        return round(sum(values) / len(values), 3) if values else 0.0

    return {
        "r@1": share("all@1"),
        "r@10": share("all@10"),
        "no_stem_r@1": share("no_stem@1"),
        "no_stem_r@10": share("no_stem@10"),
        "ru_r@1": share("ru@1"),
        "ru_r@10": share("ru@10"),
        "en_r@10": share("en@10"),
    }


def latency_row(alias: str, smoke: bool) -> Row:
    from django.test import override_settings

    from agent_memory import LongTermMemory
    from agent_memory.stores.orm import DjangoStore

    repeat = 5 if smoke else 100
    with override_settings(AGENT_MEMORY={"OPTIMIZER": False, "EMBEDDINGS": DEFAULT}):
        memory = LongTermMemory(store=DjangoStore(using=alias), optimizer=False)
        person = make_person(alias, f"search-{alias}")
        items = corpus_items()
        fill(memory, person.pk, items)
        words = itertools.cycle(
            [query for target in TARGETS for query in (target.with_words, target.in_other_words)]
        )
        memory.search(person.pk, "warm up")  # the model is loaded once per process

        def ours() -> object:
            return memory.search(person.pk, next(words))

        def floor() -> object:
            return memory.notes(person.pk)

        ours_s, floor_s = measure_pair(ours, floor, repeat)
    ratio = ours_s / floor_s
    return Row(
        "search",
        f"{label(alias)}: search a person with {len(items)} notes (stems + meaning)",
        ms(ours_s),
        f"{ms(floor_s)} (reading their notes)",
        times(ratio),
        "< 2×",
        ratio < 2,
        {
            "database": label(alias),
            "notes": len(items),
            "repeat": repeat,
            "ours_median_s": ours_s,
            "floor_median_s": floor_s,
            "ratio": ratio,
        },
    )


#: Runs in a new process: loads the default embeddings (the sentence encoder and WordLlama's
#: token table kept in the folder given as argv[1], or built from their wheels each time for
#: "off") and prints the seconds from building the backend to its first vector, then the bytes
#: then resident in the process.
_LOAD = """
import sys, time
import numpy
from agent_memory.embeddings import CombinedEmbeddings
cache = False if sys.argv[1] == "off" else sys.argv[1]
start = time.perf_counter()
backend = CombinedEmbeddings(backends=[
    {"BACKEND": "agent_memory.embeddings.WordLlamaEmbeddings", "OPTIONS": {"cache_dir": cache}},
    {"BACKEND": "agent_memory.embeddings.UniversalSentenceEncoderEmbeddings",
     "OPTIONS": {"cache_dir": cache}},
])
backend.embed(["Allergic to peanuts"])
seconds = time.perf_counter() - start
try:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    resident = int(line.split()[1]) * 1024
except OSError:
    import resource
    resident = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # the peak, elsewhere
print(seconds, resident)
"""


def load_rows(smoke: bool) -> list[Row]:
    """The default embeddings loaded in a new process: with the sentence encoder and WordLlama's
    token table kept on disk (the first time, when they are built and kept, then later), and
    with the cache off (built from the wheels every time), so the cache's worth is measured, in
    time and in resident memory."""
    import statistics
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    root = str(Path(__file__).resolve().parent.parent)

    def load(cache: str) -> tuple[float, int]:
        answer = subprocess.run(
            [sys.executable, "-c", _LOAD, cache], cwd=root, capture_output=True, text=True
        )
        if answer.returncode:
            raise RuntimeError(answer.stderr)
        seconds, resident = answer.stdout.strip().splitlines()[-1].split()
        return float(seconds), int(resident)

    repeat = 1 if smoke else 5
    with tempfile.TemporaryDirectory() as cache:
        first, _ = load(cache)
        kept_runs = [load(cache) for _ in range(repeat)]
    built_runs = [load("off") for _ in range(repeat)]
    kept = statistics.median(seconds for seconds, _ in kept_runs)
    built = statistics.median(seconds for seconds, _ in built_runs)
    kept_mb = statistics.median(resident for _, resident in kept_runs) / 1e6
    built_mb = statistics.median(resident for _, resident in built_runs) / 1e6
    return [
        Row(
            "search",
            f"load {DEFAULT_NAME} in a new process, to its first vector",
            f"{kept:.2f} s",
            f"{first:.2f} s the first time (the encoder built and both kept)",
            "",
            "< 1 s",
            kept < 1,
            {"kept_median_s": kept, "first_s": first},
        ),
        Row(
            "search",
            "the same load with the models' disk cache off (built from their wheels)",
            f"kept: {kept:.2f} s, {kept_mb:.0f} MB resident",
            f"off: {built:.2f} s, {built_mb:.0f} MB resident",
            times(built / kept) if kept else "",
            "kept faster and smaller",
            kept < built and kept_mb < built_mb,
            {
                "repeat": repeat,
                "kept_median_s": kept,
                "off_median_s": built,
                "kept_resident_mb": kept_mb,
                "off_resident_mb": built_mb,
                "kept_runs": kept_runs,
                "off_runs": built_runs,
            },
        ),
    ]
