"""The rows every benchmark returns, the table they print as, and the JSON they are kept in."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Row:
    """One line of the table: a measured figure, what it is compared with, and the verdict."""

    benchmark: str
    case: str
    ours: str
    versus: str = ""
    ratio: str = ""
    target: str = ""
    ok: bool | None = None
    figures: dict[str, Any] = field(default_factory=dict)


COLUMNS = ("benchmark", "case", "ours", "versus", "ratio", "target")
HEADINGS = ("benchmark", "case", "ours", "floor / alternative", "ratio", "target")


def verdict(row: Row) -> str:
    if row.ok is None:
        return row.target
    return f"{row.target} {'yes' if row.ok else 'NO'}".strip()


def markdown_table(rows: list[Row]) -> str:
    """The rows as a Markdown table (readable as plain text too)."""
    cells = [list(HEADINGS)] + [
        [str(getattr(row, name)) for name in COLUMNS[:-1]] + [verdict(row)] for row in rows
    ]
    widths = [max(len(line[index]) for line in cells) for index in range(len(HEADINGS))]
    lines = []
    for number, line in enumerate(cells):
        padded = (cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        lines.append("| " + " | ".join(padded) + " |")
        if number == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def dump(rows: list[Row], meta: dict[str, Any]) -> str:
    """The run as JSON: the machine it ran on, then every row with its raw figures."""
    return json.dumps({"run": meta, "rows": [asdict(row) for row in rows]}, indent=2) + "\n"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def times(ratio: float) -> str:
    return f"{ratio:.2f}x"
