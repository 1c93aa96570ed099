"""Running solutions against their tests: safely (sandbox, limits) and fast (warm workers).

job.py      Job, Limits, RunResult: the plain data a run consumes and produces
engine.py   Engine: runs jobs in parallel through a Pool, results as they finish
pool.py     the Pool interface and the local pool of warm worker processes
ray_pool.py the Ray backend: one warm local pool per cluster node (optional extra)
worker.py   the process inside the sandbox that forks a judge and a solution process per run
boundary.py the one channel between them: proxies, the data codec, copy-back, gradients
sandbox.py  bubblewrap command, scrubbed environment, rlimits, privilege drop
proctree.py killing every process a run left behind
harness.py  the pytest plugin that reports results over a per-run channel
verdict.py  deciding a run's outcome from the harness's report
doctor.py   what isolation this machine gives and what is missing
"""
