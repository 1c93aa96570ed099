"""Many calls across the judge/solution boundary, against plain pytest, in one run.

    .venv/bin/python benchmarks/boundary_calls.py [--calls 300] [--bank-kb 2048] \
        [--isolation strong] [--repeat 3]

A generated repository (no network, no snapshot) whose test calls its target many
times, as repository tests of losses and training steps do (lightly's NTXentLoss with a
memory bank, pyro's ELBOs): a loss module holding a large buffer (`--bank-kb`), called
`--calls` times on small batches through a stack of the test's own layers, with a
backward after each call. Printed per side: wall time of the run (warm: a warm worker of
the engine; cold: `python -m pytest` in a fresh interpreter), and for the warm side the
time in the test bodies, per call, in the boundary's codec, waiting for the solution
process and walking the judge's objects for solution code left there, and how many
large tensors were kept instead of sent again (`boundary_kept`).
Not a test: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from curator.execution.engine import Engine
from curator.execution.job import Job, Limits

LOSS = '''import torch


class Bank(torch.nn.Module):
    def __init__(self, size, dim=128):
        super().__init__()
        self.register_buffer("bank", torch.randn(dim, size))


class ContrastLoss(Bank):
    def __init__(self, size, temperature=0.5):
        super().__init__(size)
        self.temperature = temperature
        self.cross_entropy = torch.nn.CrossEntropyLoss(reduction="mean")

    def forward(self, out0, out1):
        out0 = torch.nn.functional.normalize(out0, dim=1)
        out1 = torch.nn.functional.normalize(out1, dim=1)
        logits = out0 @ out1.T / self.temperature
        labels = torch.arange(out0.shape[0])
        return self.cross_entropy(logits, labels)
'''

TEST = '''import torch

from pkg.loss import ContrastLoss


def test_many_calls():
    torch.manual_seed(0)
    loss = ContrastLoss({size})
    head = torch.nn.Sequential(*[torch.nn.Linear(32, 32) for _ in range(8)])
    for _ in range({calls}):
        value = loss(head(torch.randn(16, 32)), head(torch.randn(16, 32)))
        value.backward()
    assert value.item() > 0
'''


def make_repo(root: Path, calls: int, bank_kb: int) -> None:
    size = max(1, bank_kb * 1024 // (128 * 4))
    (root / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "loss.py").write_text(LOSS)
    (root / "tests" / "test_loss.py").write_text(TEST.format(size=size, calls=calls))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--bank-kb", type=int, default=2048)
    parser.add_argument("--isolation", default="strong")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="boundary-calls-") as tmp:
        root = Path(tmp) / "repo"
        make_repo(root, args.calls, args.bank_kb)
        text = (root / "pkg" / "loss.py").read_text()

        def job() -> Job:
            return Job(problem_id="contrast", solution=text, repo_dir=str(root),
                       overlay={"pkg/loss.py": text}, node_ids=["tests/test_loss.py"],
                       symbol="ContrastLoss.forward", python=sys.executable,
                       reference=True, limits=Limits(timeout_s=900))

        warm, timings = [], []
        with Engine(workers=1, isolation=args.isolation) as engine:
            list(engine.run([job()]))          # starts the warm worker
            for _ in range(args.repeat):
                started = time.perf_counter()
                (result,) = engine.run([job()])
                warm.append(time.perf_counter() - started)
                if result.outcome != "passed":
                    sys.exit(f"error: the warm run is {result.outcome}: {result.reason}")
                timings.append(result.env.get("timing", {}))
        cold = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p",
                                   "no:cacheprovider", "tests/test_loss.py"], cwd=root,
                                  capture_output=True, text=True, check=False)
            cold.append(time.perf_counter() - started)
            if done.returncode:
                sys.exit(f"error: the cold run failed:\n{done.stdout[-2000:]}")
    warm_s, cold_s = statistics.median(warm), statistics.median(cold)
    bodies = statistics.median(t.get("test_bodies", 0.0) for t in timings)
    calls = timings[-1].get("boundary_calls", 0)
    print(f"{args.calls} calls, a {args.bank_kb} KB buffer, isolation {args.isolation}, "
          f"median of {args.repeat}")
    print(f"warm run        {warm_s:7.2f} s  (test bodies {bodies:.2f} s, "
          f"{1000 * bodies / max(1, calls):.1f} ms per boundary call, {calls} calls)")
    print(f"  codec         {statistics.median(t.get('boundary_codec', 0) for t in timings):7.2f} s")
    print(f"  waiting       {statistics.median(t.get('boundary_wait', 0) for t in timings):7.2f} s")
    print(f"  object walks  {statistics.median(t.get('boundary_walk', 0) for t in timings):7.2f} s")
    print(f"  kept tensors  {timings[-1].get('boundary_kept', 0):7d}")
    print(f"cold pytest     {cold_s:7.2f} s")
    print(f"ratio cold/warm {cold_s / warm_s:7.2f}")


if __name__ == "__main__":
    main()
