"""A missing bubblewrap, ray or sandbox-only library fails the run unless CURATOR_ALLOW_SKIP=1 allows the skip."""

import textwrap

pytest_plugins = ["pytester"]

# The suite's own hooks, on a machine where bubblewrap is missing.
CONFTEST = textwrap.dedent("""\
    import requirements_support
    from requirements_support import pytest_configure, pytest_runtest_setup

    requirements_support.bwrap_status = lambda: (False, "bwrap is not installed")
    """)
TESTS = textwrap.dedent("""\
    import pytest
    from requirements_support import import_or_fail

    @pytest.mark.requires_bwrap
    def test_sandbox():
        pass

    def test_ray():
        import_or_fail("ray_that_does_not_exist")
    """)
# A module whose tests use the library only in the sandbox: looked for, not imported, at
# collection (in every pytest-xdist worker).
SANDBOX_ONLY = textwrap.dedent("""\
    import sys

    from requirements_support import installed_or_fail

    installed_or_fail("tabnanny")   # there, and left unimported
    assert "tabnanny" not in sys.modules
    installed_or_fail("json_that_does_not_exist")

    def test_graphs():
        pass
    """)


def _run(pytester, monkeypatch, tests=TESTS, **env):
    import pathlib
    monkeypatch.setenv("PYTHONPATH", str(pathlib.Path(__file__).parents[1]))
    for key in ("CI", "CURATOR_ALLOW_SKIP"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_needs=tests)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:textual-snapshot",
                                         "-p", "no:syrupy", "-q")


def test_ci_fails_when_bwrap_or_ray_is_missing(pytester, monkeypatch):
    result = _run(pytester, monkeypatch, CI="true")
    result.assert_outcomes(failed=1, errors=1)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*bubblewrap unavailable in CI*CURATOR_ALLOW_SKIP=1*"])


def test_without_the_setting_they_fail_outside_ci_too(pytester, monkeypatch):
    _run(pytester, monkeypatch).assert_outcomes(failed=1, errors=1)


def test_the_explicit_setting_allows_the_skip(pytester, monkeypatch):
    _run(pytester, monkeypatch, CI="true", CURATOR_ALLOW_SKIP="1").assert_outcomes(skipped=2)


def test_a_library_used_only_in_the_sandbox_fails_when_missing_and_is_not_imported(
        pytester, monkeypatch):
    result = _run(pytester, monkeypatch, tests=SANDBOX_ONLY, CI="true")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*json_that_does_not_exist unavailable in CI*"])
    _run(pytester, monkeypatch, tests=SANDBOX_ONLY, CI="true",
         CURATOR_ALLOW_SKIP="1").assert_outcomes(skipped=1)
