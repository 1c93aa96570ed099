"""How `make test`'s two workers would share the suite, replayed from a run's durations.

    .venv/bin/python -m pytest -p no:cacheprovider --collect-only -q tests > COLLECTED
    .venv/bin/python benchmarks/xdist_schedule.py DURATIONS COLLECTED [--workers 2]

DURATIONS: the output of a run with `--durations=0` (setup + call + teardown are summed
per test; tests it does not list count as 0 s). COLLECTED: the node ids in collection
order. Prints the sum of the tests' seconds, its share per worker (the best any
scheduler can do), and the end of each worker under pytest-xdist 3.8's `load`
scheduling (a first chunk of a quarter of each worker's share, in collection order,
then refills of consecutive tests; a worker keeps what it was sent) for the
collection order and for the heaviest modules first, and under a greedy scheduler
(each free worker takes the next test: what `worksteal` approaches, without its
costs). Not a test: it answers whether ordering or another scheduler could shorten the
suite before a 20-minute run is spent on finding out.
"""

from __future__ import annotations

import argparse
import heapq
import re
from collections import defaultdict
from pathlib import Path

LINE = re.compile(r"([0-9.]+)s (?:call|setup|teardown)\s+(\S+)")


def durations(path: Path) -> dict[str, float]:
    seconds: dict[str, float] = defaultdict(float)
    for line in path.read_text(encoding="utf-8").splitlines():
        match = LINE.match(line)
        if match:
            seconds[match.group(2)] += float(match.group(1))
    return seconds


def load_scheduling(order: list[str], seconds: dict[str, float], workers: int) -> list[float]:
    """When each worker ends under xdist's LoadScheduling (schedule, check_schedule)."""
    pending = list(range(len(order)))
    queued: list[list[int]] = [[] for _ in range(workers)]

    def send(worker: int, count: int) -> None:
        for _ in range(count):
            if pending:
                queued[worker].append(pending.pop(0))

    for worker in range(workers):
        send(worker, max(len(order) // workers // 4, 2))
    clock = [0.0] * workers
    ends = [0.0] * workers
    events: list[tuple[float, int]] = []

    def start(worker: int) -> None:
        if queued[worker]:
            test = order[queued[worker][0]]
            heapq.heappush(events, (clock[worker] + seconds.get(test, 0.0), worker))
        else:
            ends[worker] = clock[worker]

    for worker in range(workers):
        start(worker)
    while events:
        clock_now, worker = heapq.heappop(events)
        clock[worker] = clock_now
        took = seconds.get(order[queued[worker].pop(0)], 0.0)
        if pending:
            low = max(2, len(pending) // workers // 4)
            high = max(2, len(pending) // workers // 2)
            waiting = len(queued[worker])
            if waiting < low and not (took >= 0.1 and waiting >= 2):
                send(worker, high - waiting)
        start(worker)
    return ends


def greedy(order: list[str], seconds: dict[str, float], workers: int) -> float:
    free = [(0.0, worker) for worker in range(workers)]
    for test in order:
        clock, worker = heapq.heappop(free)
        heapq.heappush(free, (clock + seconds.get(test, 0.0), worker))
    return max(clock for clock, _ in free)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("durations", type=Path)
    parser.add_argument("collected", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    seconds = durations(args.durations)
    order = [line.strip() for line in args.collected.read_text(encoding="utf-8").splitlines()
             if "::" in line]
    total = sum(seconds.get(test, 0.0) for test in order)
    print(f"{len(order)} tests, {total:.0f} s in all, {total / args.workers:.0f} s per worker "
          "at best")
    per_module: dict[str, float] = defaultdict(float)
    for test in order:
        per_module[test.split("::")[0]] += seconds.get(test, 0.0)
    heaviest = sorted(order, key=lambda test: -per_module[test.split("::")[0]])
    for name, ordered in (("collection order", order), ("heaviest modules first", heaviest)):
        ends = load_scheduling(ordered, seconds, args.workers)
        print(f"load, {name}: workers end at " + ", ".join(f"{e:.0f}" for e in ends) +
              f" s (the suite: {max(ends):.0f} s)")
    print(f"greedy, collection order: {greedy(order, seconds, args.workers):.0f} s")


if __name__ == "__main__":
    main()
