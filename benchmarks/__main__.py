"""``python -m benchmarks [name …] [--smoke] [--output FILE]``, a name being one of :data:`NAMES`.

Runs the named benchmarks (all of them by default) on throwaway databases, prints one table and
writes it with every raw figure to ``benchmarks/results/latest.json``. ``--smoke`` runs each
with tiny sizes, only to prove it works (its ratios mean nothing).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import platform
import sys
import time
import traceback
from pathlib import Path

from .report import Row, dump, markdown_table

NAMES = ("turn", "tool", "cache", "load", "search", "optimizer", "secrets", "import", "scale")
RESULTS = Path(__file__).resolve().parent / "results" / "latest.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("names", nargs="*", metavar="name", help=f"any of {', '.join(NAMES)}")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: prove it runs")
    parser.add_argument("--output", type=Path, default=None, help=f"default: {RESULTS}")
    parser.add_argument(
        "--no-postgres", action="store_true", help="SQLite only (load is then skipped)"
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(NAMES))
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(NAMES)}")
    names = [name for name in NAMES if name in args.names] or list(NAMES)
    output = args.output or (RESULTS if not args.smoke else None)

    from .environment import prepared

    started = time.monotonic()
    rows: list[Row] = []
    failures: list[str] = []
    with prepared(use_postgres=not args.no_postgres, reference="scale" in names) as env:
        for name in names:
            module = importlib.import_module(f"benchmarks.{name}")
            print(f"running {name} …", file=sys.stderr, flush=True)
            begun = time.monotonic()
            try:
                rows.extend(module.run(env, smoke=args.smoke))
            except Exception:
                failures.append(name)
                traceback.print_exc()
                rows.append(Row(name, "failed: see the traceback above", "-", ok=False))
            print(f"  {name}: {time.monotonic() - begun:.1f} s", file=sys.stderr, flush=True)
    elapsed = time.monotonic() - started

    import django

    meta = {
        "finished": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "seconds": round(elapsed, 1),
        "smoke": args.smoke,
        "benchmarks": names,
        "python": platform.python_version(),
        "django": django.get_version(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "failed": failures,
    }
    print(markdown_table(rows))
    print(f"\n{len(names)} benchmark(s) in {elapsed:.0f} s", "(smoke sizes)" if args.smoke else "")
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(dump(rows, meta), encoding="utf-8")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
