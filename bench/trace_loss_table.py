"""Every way real code turns traced data into plain values: right, loud, or silent?

Prints the table of ``tests/tracing/loss_table.py``: each idiom is traced in a session, its
recorded graph replayed on fresh inputs and compared with the plain code; a case that is
not reproduced must warn at the user's line that lost the trace, naming the cause.

Run: python bench/trace_loss_table.py [case-name ...]
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.tracing.loss_table import CASES, classify  # noqa: E402


def main(names: list[str]) -> Counter:
    counts: Counter = Counter()
    print("| idiom | result | detail |\n|---|---|---|")
    for case in CASES:
        if names and case.name not in names:
            continue
        kind, detail = classify(case)
        counts[kind] += 1
        print(f"| {case.name} | {kind} | {detail.replace('|', '/')} |", flush=True)
    print(", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return counts


if __name__ == "__main__":
    main(sys.argv[1:])
