"""secrets: how well and how fast the detector tells credentials from look-alikes.

Four labelled corpora: the tuning corpus the rules were written from (``tests/secrets_corpus.py``),
a fresh one written after the rules were frozen in round four (``tests/secrets_fresh_corpus.py``),
two written blind in round five whose misses then tuned the rules
(``tests/secrets_round_five_corpus.py``), and a blind one written after that
(``tests/secrets_blind_corpus.py``): the fresh and the blind corpus are the honest measures. For
each: recall on the secrets and the false-positive rate on the look-alikes,
for the detector as shipped, for the app's own rules alone (what runs where Betterleaks has no
wheel) and for Betterleaks alone (the maintained rule set by itself). Then the cost of a check,
which runs on every write: per short text (the corpora's texts), per 500-character note, and
the first call of a fresh process (the engine loads then).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from .environment import Environment
from .report import Row, ms

ROOT = Path(__file__).resolve().parent.parent
LONG_NOTE = (
    "Prefers tea over coffee, usually green tea without sugar; works from home on Fridays, "
    "flies SU 1234 to Kazan on 14.09, order 51827364 is on its way and the router sticker has "
    "the Wi-Fi details. Reads ISBN 978-0-13-468599-1 and keeps notes in Obsidian. "
) * 3


def _figures(corpus: list[tuple[str, str]], harmless: list[tuple[str, str]], detectors: Iterable):
    from agent_memory.secrets import find_secret

    detectors = tuple(detectors)
    caught = sum(find_secret(text, detectors) is not None for _, text in corpus)
    refused = sum(find_secret(text, detectors) is not None for _, text in harmless)
    return {
        "secrets": len(corpus),
        "caught": caught,
        "recall": caught / len(corpus),
        "look_alikes": len(harmless),
        "refused": refused,
        "false_positive_rate": refused / len(harmless),
    }


def _per_text(texts: list[str], repeats: int) -> list[float]:
    from agent_memory.secrets import find_secret

    timings = []
    for _ in range(repeats):
        for text in texts:
            begun = time.perf_counter()
            find_secret(text)
            timings.append(time.perf_counter() - begun)
    return timings


def _first_call() -> float:
    script = (
        "import time\nfrom agent_memory.secrets import find_secret\n"
        "begun = time.perf_counter(); find_secret('Prefers green tea')\n"
        "print(time.perf_counter() - begun)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip())


def run(env: Environment, *, smoke: bool = False) -> list[Row]:
    from agent_memory.secrets import DETECTORS, maintained
    from tests import (
        secrets_blind_corpus,
        secrets_corpus,
        secrets_fresh_corpus,
        secrets_round_five_corpus,
    )

    own = [detector for detector in DETECTORS if detector.name != "maintained_rules"]
    alone = [detector for detector in DETECTORS if detector.name == "maintained_rules"]
    corpora = {
        "tuning": (secrets_corpus.SECRETS, secrets_corpus.HARMLESS),
        "fresh": (secrets_fresh_corpus.SECRETS, secrets_fresh_corpus.LOOK_ALIKES),
        "round five": (secrets_round_five_corpus.SECRETS, secrets_round_five_corpus.LOOK_ALIKES),
        "blind": (secrets_blind_corpus.SECRETS, secrets_blind_corpus.LOOK_ALIKES),
    }
    rows: list[Row] = []
    for name, (corpus, harmless) in corpora.items():
        shipped = _figures(corpus, harmless, DETECTORS)
        fallback = _figures(corpus, harmless, own)
        figures = {"shipped": shipped, "own_rules_only": fallback}
        if maintained.available():
            figures["betterleaks_alone"] = _figures(corpus, harmless, alone)
        versus = f"own rules {fallback['recall']:.1%} / {fallback['false_positive_rate']:.1%}" + (
            f"; Betterleaks alone {figures['betterleaks_alone']['recall']:.1%} / "
            f"{figures['betterleaks_alone']['false_positive_rate']:.1%}"
            if "betterleaks_alone" in figures
            else "; Betterleaks not installed"
        )
        fresh = name in ("fresh", "blind")
        rows.append(
            Row(
                "secrets",
                f"{name} corpus: recall / false positives "
                f"({shipped['secrets']} secrets, {shipped['look_alikes']} look-alikes)",
                f"{shipped['recall']:.1%} ({shipped['caught']}/{shipped['secrets']}) / "
                f"{shipped['false_positive_rate']:.1%} ({shipped['refused']})",
                versus,
                target=">= 95% / <= 2%" if fresh else "",
                ok=(shipped["recall"] >= 0.95 and shipped["false_positive_rate"] <= 0.02)
                if fresh
                else None,
                figures=figures,
            )
        )

    texts = [text for corpus in corpora.values() for part in corpus for _, text in part]
    short = _per_text(texts, 1 if smoke else 5)
    long = _per_text([LONG_NOTE[:500]], 5 if smoke else 200)
    first = _first_call()
    p50, p99 = statistics.median(short), statistics.quantiles(short, n=100)[98]
    rows.append(
        Row(
            "secrets",
            f"check per short text, p50 / p99 ({len(texts)} texts)",
            f"{ms(p50)} / {ms(p99)}",
            f"500-character note p50 {ms(statistics.median(long))}",
            target="p50 < 1 ms",
            ok=p50 < 0.001,
            figures={"short_p50": p50, "short_p99": p99, "long_p50": statistics.median(long)},
        )
    )
    rows.append(
        Row(
            "secrets",
            "first check of a fresh process (engine loads)",
            ms(first),
            "Betterleaks in use" if maintained.available() else "Betterleaks not installed",
            target="once per process",
            figures={"first_call": first},
        )
    )
    return rows
