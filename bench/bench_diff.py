"""The text diff the app, the notebooks and the CLI show: difflib (before) against registry/explain/text_diff.py (now).

    python bench/bench_diff.py [--sizes 23,46,100] [--old-limit 120]

Pairs from schemas.similar_fields_pair: pretty-printed Avro records of hundreds of near-identical fields, some
retyped, dropped, added and moved. "old" is what the app did before: difflib.SequenceMatcher(autojunk=False)
for the side-by-side view plus difflib.unified_diff for the copyable one, in a child process given
`--old-limit` seconds (reported as "> N s" past it). "new" is everything the Diff page now does for a diff:
the shared line diff, the side-by-side HTML (app/review.py) and the unified text. Target (issue 18 item 10):
two 100 KiB schemas diffed and rendered in at most 1 s.
"""

from __future__ import annotations

import argparse
import difflib
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(_ROOT), str(_ROOT / "bench")]

from app.review import side_by_side  # noqa: E402
from registry.explain.text_diff import line_diff  # noqa: E402
from schemas import similar_fields_pair  # noqa: E402


def old_way(old: str, new: str) -> None:
    a, b = old.splitlines(), new.splitlines()
    list(difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_grouped_opcodes(3))
    list(difflib.unified_diff(a, b, "old", "new", lineterm=""))


def new_way(old: str, new: str) -> int:
    lines = line_diff(old, new)
    page = side_by_side(old, new, old_label="old", new_label="new", lines=lines)
    return len(page) + sum(1 for _ in lines.unified("old", "new"))


def _timed_old(kib: int, out: multiprocessing.Queue[float]) -> None:
    old, new = similar_fields_pair(kib)
    start = time.perf_counter()
    old_way(old, new)
    out.put(time.perf_counter() - start)


def time_old(kib: int, limit: float) -> float | None:
    """Seconds, or None past `limit` (the child is stopped)."""
    queue: multiprocessing.Queue[float] = multiprocessing.Queue()
    child = multiprocessing.Process(target=_timed_old, args=(kib, queue))
    child.start()
    child.join(limit)
    if child.is_alive():
        child.terminate()
        child.join()
        return None
    return queue.get()


def time_new(kib: int, rounds: int = 5) -> float:
    old, new = similar_fields_pair(kib)
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        new_way(old, new)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="23,46,100", help="KiB per schema, comma-separated")
    parser.add_argument("--old-limit", type=float, default=120.0, help="seconds allowed to the old way")
    args = parser.parse_args()
    print(f"{'size':>8} {'lines':>7} {'old (difflib)':>15} {'new (diff+render)':>19}")
    worst = 0.0
    for kib in (int(s) for s in args.sizes.split(",")):
        old, new = similar_fields_pair(kib)
        new_s = time_new(kib)
        old_s = time_old(kib, args.old_limit)
        shown = f"> {args.old_limit:.0f} s" if old_s is None else f"{old_s:.2f} s"
        print(f"{len(old) // 1024:>5} KiB {len(old.splitlines()):>7} {shown:>15} {new_s * 1000:>16.0f} ms")
        if kib >= 100:
            worst = max(worst, new_s)
    if worst:
        print(f"target: 100 KiB diffed and rendered in <= 1 s: {'met' if worst <= 1.0 else 'MISSED'} ({worst:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
