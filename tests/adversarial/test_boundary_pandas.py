"""Data-library values cross the boundary of a repository run: object and record
arrays (item by item, by fields), and pandas values when its environment preloads
pandas: their pickles name pandas' own reconstructors (Cython functions such as
`pandas._libs.internals._unpickle_block`), which the solution process now sends by name
and the judge resolves, only those and only when pandas is an allowed library. Before,
every cleanlab reference that keeps a DataFrame (CleanLearning.fit) failed with "a value
of type _cython_3_0_11.cython_function_or_method cannot cross". A stand-in `pandas`
package (the curator's venv has no pandas) mimics what the real one pickles."""

from __future__ import annotations

import io
import pickle
import sys
import textwrap

import pytest

from curator.execution import boundary

FAKE = {
    "pandas/__init__.py": "",
    "pandas/_libs/__init__.py": "",
    # a Cython function pickles as its name (its __reduce__ returns the name)
    "pandas/_libs/internals.py": textwrap.dedent('''
        class cython_function_or_method:
            def __init__(self, function):
                self._function = function
                self.__module__ = __name__
                self.__name__ = self.__qualname__ = function.__name__
            def __call__(self, *args):
                return self._function(*args)
            def __reduce__(self):
                return self.__name__

        class Block:
            def __init__(self, values, ndim):
                self.values, self.ndim = values, ndim
            def __reduce__(self):
                return _unpickle_block, (self.values, self.ndim)

        def _unpickle_block(values, ndim):
            return Block(values, ndim)

        _unpickle_block = cython_function_or_method(_unpickle_block)
        '''),
    "pandas/_libs/evil.py": "def run(*args):\n    raise SystemExit('ran')\n",
}


@pytest.fixture
def fake_pandas(tmp_path, monkeypatch):
    for relpath, text in FAKE.items():
        (tmp_path / relpath).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relpath).write_text(text, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [n for n in sys.modules if n == "pandas" or n.startswith("pandas.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(boundary, "ALLOWED_ROOTS", set(boundary.ALLOWED_ROOTS))
    import pandas._libs.internals as internals
    yield internals
    for name in [n for n in sys.modules if n == "pandas" or n.startswith("pandas.")]:
        del sys.modules[name]


class _Link:   # what the solution's pickler asks of its link for plain data
    def note(self, text):
        pass

    def unchanged_request_array(self, obj):   # none of the judge's arrays came here
        return None


def solution_dumps(value) -> bytes:
    buffer = io.BytesIO()
    boundary.SolutionPickler(_Link(), buffer).dump(value)
    return buffer.getvalue()


def test_an_array_of_python_objects_crosses_item_by_item():
    """A DataFrame's string column is such an array: "a numpy array of dtype object
    cannot cross" was the next failure of every cleanlab reference keeping one."""
    np = pytest.importorskip("numpy")
    values = np.array([["a", None], [3, 2.5]], dtype=object)
    back = boundary.judge_loads(solution_dumps({"column": values}))["column"]
    assert back.dtype == object and back.shape == (2, 2) and back.tolist() == values.tolist()
    with pytest.raises(boundary.NotData, match="do not match its shape"):
        boundary._ao((3,), ["a"], None)
    with pytest.raises(boundary.CannotCross, match="dtype"):   # objects in records: not
        solution_dumps(np.zeros(2, dtype=[("x", "i4"), ("y", object)]))


def test_a_record_array_crosses_with_its_fields():
    """small-text's EarlyStopping keeps its history as one: "a numpy array of dtype
    [('epoch', '<i8'), ...] cannot cross" failed 10 of its tests."""
    np = pytest.importorskip("numpy")
    history = np.zeros(3, dtype=[("epoch", "<i8"), ("val_loss", "<f8")])
    history["epoch"], history["val_loss"] = [1, 2, 3], [0.5, 0.25, np.nan]
    back = boundary.judge_loads(solution_dumps(history))
    assert back.dtype == history.dtype and back["epoch"].tolist() == [1, 2, 3]
    assert back["val_loss"][1] == 0.25 and np.isnan(back["val_loss"][2])
    with pytest.raises(boundary.NotData, match="not data"):
        boundary._make_array([("epoch", 8)], (1,), b"\0" * 8)
    with pytest.raises(boundary.NotData):
        boundary._make_array([("x", "O")], (1,), b"\0" * 8)
    nested = np.zeros(1, dtype=[("a", [("b", "<i4")]), ("c", "<f4", (2,))])
    assert boundary.judge_loads(solution_dumps(nested)).dtype == nested.dtype
    with pytest.raises(boundary.NotData):   # an object field, however deep
        boundary._make_array([("a", [("b", "O")])], (1,), b"\0" * 8)
    with pytest.raises(boundary.NotData, match="not data"):
        boundary._make_array([("a", "<i4", (2.5,))], (1,), b"\0" * 8)


def test_a_pandas_block_crosses_when_pandas_is_an_allowed_library(fake_pandas):
    boundary.configure_allowed(["pandas"])
    data = solution_dumps({"frame": fake_pandas.Block([1.5, 2.5], 2)})
    back = boundary.judge_loads(data)["frame"]
    assert type(back) is fake_pandas.Block and back.values == [1.5, 2.5] and back.ndim == 2


def test_not_without_pandas_allowed_nor_another_function_of_pandas(fake_pandas):
    boundary.configure_allowed(["pandas"])
    data = solution_dumps(fake_pandas.Block([1], 1))
    boundary.ALLOWED_ROOTS.discard("pandas")   # a self-contained run: no pandas
    with pytest.raises(boundary.NotData, match="_unpickle_block"):
        boundary.judge_loads(data)
    boundary.configure_allowed(["pandas"])
    import pandas._libs.evil as evil

    class Forged:
        def __reduce__(self):
            return evil.run, ("x",)

    with pytest.raises(boundary.NotData, match="pandas._libs.evil.run"):
        boundary.judge_loads(pickle.dumps(Forged(), protocol=5))
