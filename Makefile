# Two commands matter: `make run` and `make test`. Everything they need is installed here.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q

.PHONY: run test install install-test bench lint mutate clean sandbox sandbox-optional

$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	touch $@

# torch first, pinned: on this kind of machine 2.13.0 is a CPU wheel on local disk,
# while an unpinned torch would pull a multi-GB CUDA build.
$(VENV)/.torch: $(VENV)/.created
	$(PIP) install "torch==2.13.0"
	touch $@

$(VENV)/.installed: $(VENV)/.torch pyproject.toml
	$(PIP) install -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml
	$(PIP) install -e ".[test,ray]"
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

# bubblewrap, the strong sandbox for runs: installed when the machine allows (root with
# apt-get, or sudo without a password); otherwise one line says how. `make run` goes on in
# weak isolation, `make test` fails (CURATOR_ALLOW_SKIP=1 skips those tests instead).
sandbox:
	@sh scripts/ensure-bubblewrap.sh --required

sandbox-optional:
	@sh scripts/ensure-bubblewrap.sh --optional

run: sandbox-optional install
	$(VENV)/bin/curator --workspace . load --quiet || true
	$(VENV)/bin/curator --workspace .

# The suite mostly waits (warm workers starting, Ray, timeouts, other processes' runs):
# with one pytest process per core its CPU time was about its wall time, half of two
# cores. One more process than cores: 3 on 2 cores took 776 s against 1298 s for 2, one
# after the other on the same loaded machine. With 3 on an idle 2-core machine the suite
# still used about 41% of both cores (1272 s of wall, about 1050 s of CPU), so three more
# than cores; 5 passed on a machine loaded to 10 by other work too. The slowest tests are
# listed at the end.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 3 )))

test: sandbox install-test
	$(PY) -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --durations=15 $(PYTEST_ARGS)

bench: install
	$(PY) benchmarks/engine_vs_pytest.py

# ruff, then the import contracts of docs/ARCHITECTURE.md#layers ([tool.importlinter]).
lint: install-test
	$(PY) -m ruff check curator tests benchmarks
	$(VENV)/bin/lint-imports

# Mutation testing of the core modules ([tool.mutmut] in pyproject.toml); slow, so not part
# of `make test`. Prints the score per module (equivalent mutants: docs/ARCHITECTURE.md).
MUTATE_CHILDREN ?= 2
mutate: install-test
	rm -rf mutants
	$(VENV)/bin/mutmut run --max-children $(MUTATE_CHILDREN) >/dev/null || true
	$(PY) tests/mutation_report.py

clean:
	rm -rf $(VENV) mutants db/curator.sqlite*
