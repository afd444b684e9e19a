"""optimizer: characters sent to the model per run, and the merges that still get through.

A person with 200 notes: 180 unrelated ones (:mod:`benchmarks.search_corpus`) and 10 planted
pairs of duplicates (good merges of the labelled merge corpus). The model is an oracle that
proposes exactly the planted merges whose notes it is shown, so what is measured is what the app
sends: before (every note in one call, as the optimizer did without candidate selection) against
after (candidate groups only), and a second run over unchanged notes.

The merge corpus (``tests/merge_corpus.py``): each labelled proposal among the 180 unrelated
notes; before, the model sees every note; after, a merge can only be proposed if its notes land
in one call. The share of good merges accepted, and the bad ones accepted (must be 0).
"""

from __future__ import annotations

import json
from typing import Any

from .environment import Environment
from .people import fill
from .report import Row
from .search import DEFAULT, DEFAULT_NAME, corpus_items

PLANS: dict[str, list[dict[str, Any]]] = {}
SENT: dict[str, list[int]] = {}


class OracleModel:
    """Proposes the planted merges whose notes are all in the prompt; counts what it is sent."""

    def __init__(self, plan: str) -> None:
        self.plan = plan

    def complete(self, messages: list[dict[str, Any]]) -> str:
        SENT.setdefault(self.plan, []).append(sum(len(m["content"]) for m in messages))
        shown = set()
        for line in messages[-1]["content"].splitlines()[1:]:
            shown.add(json.loads(line)["id"])
        groups = [group for group in PLANS[self.plan] if set(group["ids"]) <= shown]
        return json.dumps({"groups": groups}, ensure_ascii=False)


def _pairs() -> list[Any]:
    """Good two-note merges of the corpus that the checker accepts: what a model would merge."""
    from datetime import UTC, datetime

    from agent_memory.notes import Note
    from agent_memory.optimizer.checker import check_groups
    from tests.merge_corpus import CASES

    now = datetime(2030, 1, 1, tzinfo=UTC)
    found = []
    for case in CASES:
        if not case.good or len(case.sources) != 2 or case.others:
            continue
        notes = [
            Note(i, 1, tuple(_cats(c)), text, 1, "agent", now, now)
            for i, (c, text) in enumerate(case.sources, start=1)
        ]
        group = {"ids": [1, 2], "categories": list(case.categories), "content": case.content}
        if check_groups([group], notes)[0].accepted:
            found.append(case)
    return found


def _cats(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def run(env: Environment, *, smoke: bool = False) -> list[Row]:
    size = 40 if smoke else 180
    rows = []
    for name, embeddings in ((DEFAULT_NAME, DEFAULT), ("stems only", False)):
        rows += cost_rows(name, embeddings, size, headline=embeddings is not False)
    rows += corpus_rows(size)
    return rows


def cost_rows(name: str, embeddings: Any, size: int, headline: bool = True) -> list[Row]:
    from django.test import override_settings

    from agent_memory import LongTermMemory
    from agent_memory.optimizer.candidates import message_chars
    from agent_memory.stores.in_memory import InMemoryStore

    plan = f"cost-{name}"
    settings = {
        "EMBEDDINGS": embeddings,
        "OPTIMIZER": {"interval_hours": 24},
        "MODELS": {"default": {"BACKEND": f"{__name__}.OracleModel", "OPTIONS": {"plan": plan}}},
    }
    with override_settings(AGENT_MEMORY=settings):
        memory = LongTermMemory(store=InMemoryStore())
        fill(memory, 1, corpus_items()[:size])
        PLANS[plan] = []
        for case in _pairs()[:10]:
            first, second = memory.create_notes(
                1, [{"categories": _cats(c), "content": text} for c, text in case.sources]
            )
            PLANS[plan].append(
                {
                    "ids": [first.key, second.key],
                    "categories": list(case.categories),
                    "content": case.content,
                }
            )
        notes = memory.notes(1)
        before = message_chars(notes)
        SENT[plan] = []
        first_run = memory.optimize(1, force=True)
        after = sum(SENT[plan])
        calls = len(SENT[plan])
        SENT[plan] = []
        second_run = memory.optimize(1, force=True)
        unchanged = sum(SENT[plan])
    share = after / before
    figures = {
        "embeddings": name,
        "notes": len(notes),
        "planted_pairs": len(PLANS[plan]),
        "before_chars": before,
        "after_chars": after,
        "calls": calls,
        "applied": first_run.applied,
        "unchanged_chars": unchanged,
        "second_run": second_run.status,
    }
    return [
        Row(
            "optimizer",
            f"{name}: characters sent, {len(notes)} notes with {len(PLANS[plan])} duplicate "
            f"pairs ({first_run.applied} merged, {calls} call(s))",
            f"{after:,}",
            f"{before:,} (every note)",
            f"{share:.0%}",
            "≤ 25%" if headline else "",
            share <= 0.25 and first_run.applied == len(PLANS[plan]) if headline else None,
            figures,
        ),
        Row(
            "optimizer",
            f"{name}: characters sent again, notes unchanged since the last run",
            f"{unchanged:,}",
            "",
            "",
            "0",
            unchanged == 0 and second_run.status == "succeeded",
            figures,
        ),
    ]


def corpus_rows(size: int) -> list[Row]:
    from datetime import UTC, datetime

    import numpy as np
    from django.test import override_settings

    from agent_memory.embeddings import get_embedder, note_text
    from agent_memory.notes import Note
    from agent_memory.optimizer.candidates import candidate_groups
    from agent_memory.optimizer.checker import check_groups
    from tests.merge_corpus import CASES

    now = datetime(2030, 1, 1, tzinfo=UTC)

    def note(note_id: int, categories: Any, content: str) -> Note:
        return Note(note_id, 1, tuple(_cats(categories)), content, 1, "agent", now, now)

    background = [
        note(1000 + index, item["categories"], item["content"])
        for index, item in enumerate(corpus_items()[:size])
    ]
    rows = []
    for name, embeddings in ((DEFAULT_NAME, DEFAULT), ("stems only", False)):
        with override_settings(AGENT_MEMORY={"EMBEDDINGS": embeddings}):
            embedder = get_embedder()

        def vectors_of(notes: list[Note], embedder: Any = embedder) -> Any:
            if embedder is None:
                return None
            return np.asarray(embedder.embed([note_text(item) for item in notes]))

        background_vectors = vectors_of(background)
        counts = {"good": 0, "good_before": 0, "good_after": 0, "bad": 0, "bad_after": 0}
        for case in CASES:
            sources = [note(i, c, text) for i, (c, text) in enumerate(case.sources, start=1)]
            others = [note(100 + i, c, text) for i, (c, text) in enumerate(case.others, start=1)]
            ids = [item.key for item in sources]
            if case.repeat_first:
                ids = [ids[0], ids[0]]
            ids += [f"memory:{foreign}" for foreign in case.foreign_ids]
            proposal = {"ids": ids, "categories": list(case.categories), "content": case.content}
            everyone = sources + others + background
            (verdict,) = check_groups([proposal], everyone)
            own = vectors_of(sources + others)
            vectors = None if own is None else np.vstack([own, background_vectors])
            if vectors is not None:
                vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
            groups = candidate_groups(everyone, vectors)
            shown = {item.id for item in sources}
            proposed = any(shown <= {item.id for item in group} for group in groups)
            kind = "good" if case.good else "bad"
            counts[kind] += 1
            counts[f"{kind}_after"] += bool(verdict.accepted and proposed)
            if case.good:
                counts["good_before"] += bool(verdict.accepted)
        before = counts["good_before"] / counts["good"]
        after = counts["good_after"] / counts["good"]
        rows.append(
            Row(
                "optimizer",
                f"{name}: merge corpus, good merges accepted ({counts['good']} good, "
                f"{counts['bad']} bad; bad accepted after: {counts['bad_after']})",
                f"{after:.0%}",
                f"{before:.0%} (every note sent)",
                "",
                "≥ 90%, 0 bad",
                after >= 0.9 and counts["bad_after"] == 0,
                {"embeddings": name, **counts, "share_before": before, "share_after": after},
            )
        )
    return rows
