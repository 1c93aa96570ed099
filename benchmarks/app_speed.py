"""How fast the app is with a big benchmark: launch to Problems screen, filter keystrokes.

    .venv/bin/python benchmarks/app_speed.py [--count 10000] [--workspace DIR]

Builds a synthetic workspace (curator.synthetic) unless --workspace points at one, then
drives the real app headless with Textual's Pilot and prints:

- launch: from creating the app to the Problems table showing its rows (target < 1.5 s);
- filter: for each keystroke typed into the filter, the time until the table shows the
  result of that keystroke (target < 100 ms), as median / p90 / max over several queries.

Not a test: the numbers depend on the machine. Run it before and after touching the
Problems screen, the table widget or list_rows.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from textual import events
from textual.keys import _character_to_key

from curator import synthetic
from curator import workspace as workspace_mod
from curator.store import Store
from curator.tui.app import CuratorApp
from curator.tui.screens.problems import ProblemsScreen
from curator.tui.widgets.problem_table import ProblemTable

QUERIES = ("stage:model", "normalize", "status:draft task:cl", "tokens pad", "-status:retired")
POLL_S = 0.001


class PaintClock:
    """Wraps ProblemTable.render_line to note when the table was last painted."""

    def __init__(self) -> None:
        self.last = 0.0
        self.query = None   # the filter the table showed when it was last painted
        original = ProblemTable.render_line

        def render_line(table, y):
            if y == 1:
                self.last = time.perf_counter()
                self.query = getattr(table.screen, "shown_query", None)
            return original(table, y)

        ProblemTable.render_line = render_line   # type: ignore[method-assign]


async def wait_for(condition, timeout: float = 10.0, what: str = "") -> None:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"the app did not get there in time: {what}")
        await asyncio.sleep(POLL_S)


def process_launch(ws_root: Path, size: tuple[int, int], first_id: str,
                   timeout: float = 30.0) -> tuple[float, float]:
    """(wall, cpu) seconds from starting `curator --workspace WS` in a pseudo-terminal
    until the first problem id is drawn: what a person waits for, Python start-up and
    imports included. The CPU seconds are what it costs on an idle machine; the wall
    seconds grow with whatever else the machine is doing."""
    import fcntl
    import os
    import pty
    import resource
    import select
    import struct
    import subprocess
    import termios

    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
    curator = Path(sys.executable).with_name("curator")
    env = dict(os.environ, TERM="xterm-256color", CURATOR_USER="bench")
    start = time.perf_counter()
    proc = subprocess.Popen([str(curator), "--workspace", str(ws_root)], stdin=slave,
                            stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    seen = b""
    try:
        while time.perf_counter() - start < timeout:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
                if first_id.encode() in seen:
                    wall = time.perf_counter() - start
                    break
        else:
            raise TimeoutError(f"{first_id} not drawn within {timeout}s")
    finally:
        # SIGSTOP first, so the CPU it used after drawing the row is not counted
        proc.send_signal(signal.SIGSTOP)
        proc.kill()
        proc.wait(timeout=5)
        os.close(master)
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return wall, cpu


def send_key(app: CuratorApp, char: str) -> None:
    """Post one key press the way the terminal driver does (Pilot.press also waits for the
    CPU to go idle, which would add tens of milliseconds that no user sees)."""
    key = "space" if char == " " else _character_to_key(char) if not char.isalnum() else char
    event = events.Key(key, char)
    event.set_sender(app)
    app._driver.send_message(event)


async def measure(ws: workspace_mod.Workspace, size: tuple[int, int]) -> dict:
    clock = PaintClock()
    start = time.perf_counter()
    store = Store(ws.db_path, "bench")
    app = CuratorApp(ws, "bench", store=store)
    result: dict = {}
    async with app.run_test(size=size) as pilot:
        def shown() -> bool:
            screen = app.screen
            return isinstance(screen, ProblemsScreen) and screen.ready and \
                screen.query_one(ProblemTable).row_count > 0

        await wait_for(shown)
        await pilot.pause()   # one refresh: the rows are on screen
        result["launch_s"] = time.perf_counter() - start
        screen = app.screen
        table = screen.query_one(ProblemTable)
        result["rows"] = table.row_count

        await pilot.press("slash")
        latencies, cpu = [], []
        per_key = result["per_key"] = []
        for query in QUERIES:
            for index, char in enumerate(query):
                expected = query[: index + 1]
                t0 = time.perf_counter()
                cpu0 = time.process_time()
                send_key(app, char)
                await wait_for(lambda expected=expected, t0=t0: clock.query == expected
                               and clock.last > t0, what=f"table painted for {expected!r}")
                latencies.append(clock.last - t0)
                cpu.append(time.process_time() - cpu0)
                per_key.append((expected, clock.last - t0))
            result.setdefault("shown", {})[query] = table.row_count
            # clear for the next query (not measured)
            screen.query_one("#filter").value = ""
            await wait_for(lambda: screen.shown_query == "")
        result["keystrokes"] = len(latencies)
        result["filter_median_s"] = statistics.median(latencies)
        result["filter_p90_s"] = sorted(latencies)[int(0.9 * (len(latencies) - 1))]
        result["filter_max_s"] = max(latencies)
        result["filter_cpu_median_s"] = statistics.median(cpu)
    store.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--workspace", type=Path,
                        help="Use this workspace instead of generating one.")
    parser.add_argument("--size", default="120x40", help="Terminal size, COLSxROWS.")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="Print the time of every keystroke.")
    args = parser.parse_args(argv)
    size = tuple(int(v) for v in args.size.split("x"))

    with tempfile.TemporaryDirectory(prefix="curator-bench-") as tmp:
        if args.workspace:
            ws = workspace_mod.discover(args.workspace)
        else:
            t0 = time.perf_counter()
            ws = synthetic.create_workspace(Path(tmp) / "ws", args.count)
            print(f"generated {args.count} synthetic problems in "
                  f"{time.perf_counter() - t0:.1f} s")
        result = asyncio.run(measure(ws, size))   # type: ignore[arg-type]
        with Store(ws.db_path) as store:
            first = store.one("SELECT id FROM problems ORDER BY id LIMIT 1")["id"]
        # the id column is cut to fit: look for its start
        launches = [process_launch(ws.root, size, first[:12]) for _ in range(3)]

    print(f"rows: {result['rows']}  terminal: {args.size}")
    print(f"launch, real process in a pty, to the first row drawn: "
          f"{', '.join(f'{w * 1000:.0f}' for w, _ in launches)} ms wall  (target 1500 ms); "
          f"CPU {', '.join(f'{c * 1000:.0f}' for _, c in launches)} ms")
    print(f"  of which app start to table shown (in-process, after imports): "
          f"{result['launch_s'] * 1000:.0f} ms")
    print(f"filter keystroke -> table updated, over {result['keystrokes']} keystrokes: "
          f"median {result['filter_median_s'] * 1000:.1f} ms, "
          f"p90 {result['filter_p90_s'] * 1000:.1f} ms, "
          f"max {result['filter_max_s'] * 1000:.1f} ms  (target 100 ms); "
          f"CPU median {result['filter_cpu_median_s'] * 1000:.1f} ms")
    print(f"machine load average while measuring: {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs (wall times grow with it)")
    for query, rows in result["shown"].items():
        print(f"  {query!r}: {rows} rows")
    if args.verbose:
        for typed, seconds in result["per_key"]:
            print(f"    {typed!r:28} {seconds * 1000:6.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
