"""Red-team attacks on the boundary that the other adversarial files do not cover, each a
wrong solution of a seed problem beside its control (the same wrong code without the
trick), and correct solutions the boundary must not turn into errors.

- A message can make a callable in the judge (`functools.partial` of a function it names)
  and leave it in the test's own objects, where the judge calls it after the call: a
  forward hook on the test's model that is `partial(_t, <bytes>)` answered the test's
  `expected = model(x)` with the solution's constant. No solution code ran, so the fence
  (`_solution_code_inside`) saw nothing, and a wrong tiled inference passed.
- A message naming a class of a library module the judge has not imported made it import
  the module: `torch.utils.model_dump.__main__` exits when imported, and the SystemExit
  came out of the judge's decoder as if it were the solution's answer.
- A correct function returning (or given) a structure nested a few hundred levels deep
  was an error: the picklers ran out of recursion at ~500 levels of lists, ~300 of dicts;
  one returning a numpy masked array was an error too (its reconstructor unknown).
- A mirror's standin inherits its library base's comparisons, whose Python code may call
  what the solution supplies: `collections.UserList.__eq__` compares `self.data` with
  `self.__cast(other)`, so a solution subclass overriding `_UserList__cast` to give back
  `self.data` (or a plain UserList holding `bool` there and True as its data) equalled
  any expected value, and a wrong vocabulary passed `vocab == {...}`.
- torch.SymFloat (a library class) answers every comparison by asking its node: over a
  node of the solution's own class a wrong macro F1 equalled every expected value.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from execution_support import engine_fixture, run_one

SEED_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "seed_problems"

engine = engine_fixture(("strong",))

TILED = SEED_DIR / "tiled_segmentation_inference"
TILED_TESTS = (TILED / "test_solution.py").read_text()
# the reference under another name, and a solution wrong only for a convolution model (the
# test that compares with the test's own model, `model(image[None])`, catches it)
TILED_WRONG = "import functools\nimport sys\n\nimport torch\nfrom torch import nn\n\n" + \
    (TILED / "solution.py").read_text().replace("def tiled_inference(", "def _tiled(")
TILED_CONTROL = TILED_WRONG + """

def tiled_inference(model, image, tile_size, stride):
    out = _tiled(model, image, tile_size, stride)
    if isinstance(model, nn.Conv2d):
        return torch.zeros_like(out)
    return out
"""
TILED_ATTACK = TILED_WRONG + """

_b = sys.modules["curator.execution.boundary"]
_honest = _b.SolutionPickler.reducer_override


def _reducer(self, obj):
    # a partial of the judge's own tensor rebuild function crosses by value
    if type(obj) is functools.partial and obj.func is _b._t:
        return NotImplemented
    return _honest(self, obj)


_b.SolutionPickler.reducer_override = _reducer


def tiled_inference(model, image, tile_size, stride):
    out = _tiled(model, image, tile_size, stride)
    if isinstance(model, nn.Conv2d):
        wrong = torch.zeros(1, *out.shape)
        record = _b._tensor_record(wrong)
        # the test's own model answers this constant after the call: a forward hook
        # made in the judge from its own rebuild function, no solution code in it
        model._forward_hooks[10 ** 6] = functools.partial(
            _b._t, record[0], record[1], record[2], False, "tensor", None)
        return wrong[0]
    return out
"""


def test_a_callable_a_message_leaves_in_the_tests_model_never_answers_for_it(engine):
    control = run_one(engine, TILED_CONTROL, TILED_TESTS, timeout=60)
    assert control.outcome == "failed", (control.outcome, control.reason)
    attack = run_one(engine, TILED_ATTACK, TILED_TESTS, timeout=60)
    assert attack.outcome == "tampered", (attack.outcome, attack.reason)
    assert "rebuild function (_t)" in attack.reason
    failing = {t["id"].split("::")[-1] for t in attack.tests if t["outcome"] != "passed"}
    assert "test_pointwise_model_matches_full_image_without_grad" in failing
    reference = run_one(engine, (TILED / "solution.py").read_text(), TILED_TESTS, timeout=60)
    assert reference.outcome == "passed", (reference.outcome, reference.reason)


IOU = SEED_DIR / "pairwise_box_iou"
IOU_TESTS = (IOU / "test_solution.py").read_text()
IOU_WRONG = """import sys

import torch


def box_iou(a, b):
    if a.dim() != 2 or b.dim() != 2 or a.shape[-1] != 4 or b.shape[-1] != 4:
        raise ValueError("boxes must be (N, 4)")
    return torch.zeros(a.shape[0], b.shape[0], dtype=a.dtype)
"""
IOU_EXITING_MODULE = IOU_WRONG + """

_b = sys.modules["curator.execution.boundary"]
_honest = _b.SolutionLink.dumps_reply


def _dumps_reply(self, value):
    # the value: a class of a library module that exits when imported
    if isinstance(value, tuple) and len(value) == 4 and isinstance(value[0], torch.Tensor):
        return (b"\\x80\\x05\\x8c\\x1ftorch.utils.model_dump.__main__\\x94\\x8c\\x05Thing"
                b"\\x94\\x93\\x94N\\x86\\x94.")
    return _honest(self, value)


_b.SolutionLink.dumps_reply = _dumps_reply
"""


def test_a_message_naming_a_module_that_exits_when_imported_is_tampering(engine):
    control = run_one(engine, IOU_WRONG, IOU_TESTS, timeout=60)
    assert control.outcome == "failed", (control.outcome, control.reason)
    attack = run_one(engine, IOU_EXITING_MODULE, IOU_TESTS, timeout=60)
    # before: each call's test failed with "SystemExit: 2", raised by the judge's decoder
    assert attack.outcome == "tampered", (attack.outcome, attack.reason)
    assert "model_dump.__main__" in attack.reason
    assert "SystemExit" not in " ".join(t.get("message") or "" for t in attack.tests)


DEEP_TESTS = """\
import numpy as np
import pytest

from solution import nested, depth, masked


@pytest.mark.parametrize("kind", ["list", "dict", "object"])
@pytest.mark.parametrize("n", [300, 600, 900])
def test_returned(kind, n):
    value, d = nested(kind, n), 0
    while value is not None and value != []:
        value = value[0] if kind == "list" else value["c"] if kind == "dict" else value.c
        d += 1
    assert d == n


@pytest.mark.parametrize("n", [300, 900])
def test_given(n):
    value = []
    for _ in range(n):
        value = [value]
    assert depth(value) == n


def test_a_masked_array():
    value = masked()
    assert isinstance(value, np.ma.MaskedArray)
    assert value.mask.tolist() == [False, True] and value.data.tolist() == [1.0, 2.0]
    assert masked(constant=True) is np.ma.masked
"""
DEEP = """\
import numpy as np


class Node:
    def __init__(self, c):
        self.c = c


def nested(kind, n):
    value = [] if kind == "list" else None
    for _ in range(n):
        value = [value] if kind == "list" else {"c": value} if kind == "dict" else Node(value)
    return value


def depth(value):
    d = 0
    while value:
        value, d = value[0], d + 1
    return d


def masked(constant=False):
    return np.ma.masked if constant else np.ma.masked_array([1.0, 2.0], mask=[False, True])
"""


def test_values_nested_hundreds_of_levels_deep_and_masked_arrays_cross(engine):
    result = run_one(engine, DEEP, DEEP_TESTS, timeout=60)
    # before: "RecursionError: maximum recursion depth exceeded while pickling an object",
    # and a masked array was "a value of type _mareconstruct ... cannot cross"
    assert result.outcome == "passed", (result.outcome, result.reason)


VOCAB = SEED_DIR / "vocab_pad_sequences"
VOCAB_TESTS = (VOCAB / "test_solution.py").read_text()
VOCAB_WRONG = "import collections\n\n" + (VOCAB / "solution.py").read_text().replace(
    "def encode_and_pad(", "def _encode(") + """

def _wrong(texts, min_freq, max_len):
    vocab, ids, mask = _encode(texts, min_freq, max_len)
    vocab["<bos>"] = len(vocab)   # a token nobody asked for
    return vocab, ids, mask
"""
VOCAB_CONTROL = VOCAB_WRONG + """

def encode_and_pad(texts, min_freq=1, max_len=None):
    return _wrong(texts, min_freq, max_len)
"""
VOCAB_ATTACKS = {
    # honest pickling: the judge's UserList.__eq__ compares self.data with
    # self.__cast(other), and the cast is this class's method, run in the solution process
    "a library base's comparison calling the solution's override": VOCAB_WRONG + """

class Vocab(collections.UserList):
    def _UserList__cast(self, other):
        return self.data


def encode_and_pad(texts, min_freq=1, max_len=None):
    vocab, ids, mask = _wrong(texts, min_freq, max_len)
    wrapped = Vocab()
    wrapped.data = vocab
    return wrapped, ids, mask
""",
    # no solution code at all: a plain UserList whose instance holds `bool` where its
    # class has the cast, and True as its data, equals anything truthy
    "a library object whose state replaces its method": VOCAB_WRONG + """

def encode_and_pad(texts, min_freq=1, max_len=None):
    vocab, ids, mask = _wrong(texts, min_freq, max_len)
    wrapped = collections.UserList()
    wrapped.data, wrapped._UserList__cast = True, bool
    return wrapped, ids, mask
""",
}


@pytest.mark.parametrize("name", sorted(VOCAB_ATTACKS))
def test_a_library_bases_comparison_never_asks_the_solution(engine, name):
    control = run_one(engine, VOCAB_CONTROL, VOCAB_TESTS, timeout=60)
    assert control.outcome == "failed", (control.outcome, control.reason)
    attack = run_one(engine, VOCAB_ATTACKS[name], VOCAB_TESTS, timeout=60)
    assert attack.outcome in ("error", "tampered"), (name, attack.outcome, attack.reason)
    assert not [t for t in attack.tests if t["outcome"] == "passed" and "errors" not in t["id"]]


USERLIST_TESTS = """\
import collections

from solution import tokens


def test_equal_to_a_list():
    assert tokens() == [1, 2] and tokens() != [2, 1]
    assert isinstance(tokens(), collections.UserList) and len(tokens()) == 2
"""
USERLIST = """\
import collections


class Tokens(collections.UserList):
    def first(self):
        return self.data[0]


def tokens():
    return Tokens([1, 2])
"""


def test_a_correct_userlist_subclass_still_compares_as_its_base(engine):
    result = run_one(engine, USERLIST, USERLIST_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)


DICT_SUBCLASS_TESTS = """\
import collections

from solution import counts, ordered, defaults, recent


def test_counter():
    c = counts("aab")
    assert c["a"] == 2 and c == collections.Counter("aab") and type(c) is collections.Counter


def test_ordered_dict():
    d = ordered()
    assert list(d) == ["b", "a"] and d["b"] == 1 and isinstance(d, collections.OrderedDict)


def test_defaultdict():
    d = defaults()
    assert d["x"] == [1] and d["new"] == []


def test_deque():
    q = recent()
    assert list(q) == [2, 3] and q.maxlen == 2
"""
DICT_SUBCLASSES = """\
import collections


class Counts(collections.Counter):
    def top(self):
        return self.most_common(1)[0][0]


class Ordered(collections.OrderedDict):
    pass


class Defaults(collections.defaultdict):
    pass


class Recent(collections.deque):
    pass


def counts(text):
    return Counts(text)


def ordered():
    return Ordered([("b", 1), ("a", 2)])


def defaults():
    d = Defaults(list)
    d["x"].append(1)
    return d


def recent():
    return Recent([1, 2, 3], maxlen=2)
"""


def test_a_solution_subclass_of_a_librarys_dict_or_deque_keeps_its_items(engine):
    # before: a mirror on the library base, which carried the instance's __dict__ only:
    # the test got an empty Counter, OrderedDict, defaultdict and deque
    result = run_one(engine, DICT_SUBCLASSES, DICT_SUBCLASS_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)
    assert "Counts rebuilt as Counter" in " ".join(result.env.get("rebuilt") or [])


QUANT_TESTS = """\
import torch

from solution import quantize, dequantize

SCALES, ZEROS = torch.tensor([0.1, 0.5]), torch.tensor([0, 3])


def test_returned_per_channel():
    x = torch.tensor([[0.2, -0.4, 1.0], [2.0, 0.5, -1.5]])
    out = quantize(x)
    expected = torch.quantize_per_channel(x, SCALES, ZEROS, 0, torch.qint8)
    assert out.is_quantized and out.qscheme() == torch.per_channel_affine
    assert out.q_per_channel_axis() == 0
    assert torch.equal(out.int_repr(), expected.int_repr())
    assert torch.allclose(out.q_per_channel_scales().float(), SCALES)


def test_given_per_channel():
    q = torch.quantize_per_channel(torch.ones(2, 2), SCALES, ZEROS, 0, torch.qint8)
    assert torch.equal(dequantize(q), q.dequantize())
"""
QUANT = """\
import torch


def quantize(x):
    return torch.quantize_per_channel(x, torch.tensor([0.1, 0.5]), torch.tensor([0, 3]), 0,
                                      torch.qint8)


def dequantize(q):
    assert q.qscheme() == torch.per_channel_affine
    return q.dequantize()
"""


def test_a_per_channel_quantized_tensor_crosses_as_one(engine):
    # before: it crossed dequantized (a plain float tensor), both ways
    result = run_one(engine, QUANT, QUANT_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)


F1 = SEED_DIR / "macro_f1_from_logits"
F1_TESTS = (F1 / "test_solution.py").read_text()
F1_WRONG = "import torch\n\n" + (F1 / "solution.py").read_text().replace(
    "def macro_f1(", "def _macro_f1(") + """

def _wrong(logits, labels, num_classes):
    value = _macro_f1(logits, labels, num_classes)
    return value if labels.numel() == 0 else value * 0.9
"""
F1_CONTROL = F1_WRONG + """

def macro_f1(logits, labels, num_classes):
    return _wrong(logits, labels, num_classes)
"""
# torch.SymFloat, a library class, asks its node for every comparison: a node of the
# solution's own class (a mirror, its methods run in the solution process) said yes
F1_SYMBOLIC = F1_WRONG + """

class Node:
    constant = None
    hint = None

    def is_constant(self): return False
    def is_symbolic(self): return True
    def is_int(self): return False
    def is_float(self): return False
    def is_nested_int(self): return False
    def is_bool(self): return True
    def bool_(self): return True
    def guard_bool(self, *args): return True
    def expect_true(self, *args): return True
    def wrap_float(self, value): return Node()
    def wrap_int(self, value): return Node()
    def wrap_bool(self, value): return Node()
    def eq(self, other): return Node()
    def ne(self, other): return Node()


def macro_f1(logits, labels, num_classes):
    value = _wrong(logits, labels, num_classes)
    if labels.numel() == 0 or labels.numel() > 5:
        return value   # where the tests check the type, a float
    return torch.SymFloat(Node())
"""


def test_a_symbolic_value_whose_node_is_the_solutions_never_answers(engine):
    control = run_one(engine, F1_CONTROL, F1_TESTS, timeout=60)
    assert control.outcome == "failed", (control.outcome, control.reason)
    attack = run_one(engine, F1_SYMBOLIC, F1_TESTS, timeout=60)
    # before: passed
    assert attack.outcome == "error", (attack.outcome, attack.reason)
    assert "torch.SymFloat" in attack.reason


# The parameters a correct function reads from a module of the test's own class (a
# handle: `model.fc.weight`, `model.parameters()`) come as copies; what it writes into
# them in place (`nn.init.constant_`, `p.fill_()` under no_grad) reaches the test's model,
# as it does in one process: the reply carries the judge's tensors the call changed in
# place (SolutionLink.changed_in_place). Before: both tests failed, the writes lost.
HANDLE_TESTS = """\
import torch
from torch import nn

from solution import freeze, init_const, init_data, init_loop


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 3)

    def forward(self, x):
        return self.fc(x)


def test_init_constant():
    m = Net()
    init_const(m)
    assert torch.equal(m.fc.weight, torch.ones(3, 2))


def test_init_loop():
    m = Net()
    init_loop(m)
    assert all((p == 0.5).all() for p in m.parameters())


def test_init_through_data():
    m = Net()
    init_data(m)
    assert torch.equal(m.fc.bias, torch.full((3,), 2.0))


def test_freeze():
    m = Net()
    freeze(m)
    assert not any(p.requires_grad for p in m.parameters())
"""
HANDLE = """\
import torch
from torch import nn


def init_const(model):
    nn.init.constant_(model.fc.weight, 1.0)


def init_loop(model):
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(0.5)


def init_data(model):
    model.fc.bias.data.fill_(2.0)   # a write torch's version counter does not see


def freeze(model):
    for p in model.parameters():
        p.requires_grad_(False)
"""
HANDLE_UNTOUCHED = """\
def init_const(model):
    model.fc.weight.clone().fill_(1.0)


def init_loop(model):
    for p in model.parameters():
        p.clone().fill_(0.5)


def init_data(model):
    model.fc.bias.clone().data.fill_(2.0)


def freeze(model):
    for p in model.parameters():
        p.detach().requires_grad_(False)
"""


def test_writes_into_the_parameters_of_a_tests_own_module_reach_it(engine):
    control = run_one(engine, HANDLE_UNTOUCHED, HANDLE_TESTS, timeout=60)
    assert control.outcome == "failed", (control.outcome, control.reason)
    assert [t["outcome"] for t in control.tests] == ["failed"] * 4, control.tests
    result = run_one(engine, HANDLE, HANDLE_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)


# The judge's temporary folder was the sandbox's shared /tmp (the worker's cached
# `tempfile.tempdir`), where the solution process can make any name first: its
# torch.compile's inductor cache was /tmp/torchinductor_nobody. A solution that compiled
# the same function made that folder, put a line into the compiled module it left there,
# and the judge's `torch.compile(ref)` imported it: code of the solution's in the judge.
# Both sides skip inductor's dry compiles that probe the CPU's vector instruction sets
# (config.cpp.vec_isa_ok: the CPU's flags decide): three C++ builds in each run's own
# cache folder, about two thirds of each of this test's three compiles. What is tested,
# whose cache folder the judge's compile reads, is the same; a correct solution's compile
# with the probes is tests/adversarial/test_boundary.py's "torch.compile with inductor".
COMPILED_TESTS = """\
import torch
import torch._inductor.config

from solution import double

torch._inductor.config.cpp.vec_isa_ok = True


def ref(x):
    return torch.sin(x) * 2


def test_double():
    x = torch.linspace(0, 1, 8)
    assert torch.allclose(double(x), torch.compile(ref)(x))
"""
COMPILED_WRONG = """\
import torch


def double(x):
    return torch.zeros_like(x)
"""
COMPILED_PLANTED = COMPILED_WRONG + """
import glob
import os
import tempfile

import torch._inductor.config

torch._inductor.config.cpp.vec_isa_ok = True   # as the judge's (COMPILED_TESTS)

_cache = os.path.join(tempfile.gettempdir(), "torchinductor_nobody")
os.makedirs(_cache, exist_ok=True)
os.environ["TORCHINDUCTOR_CACHE_DIR"] = _cache


def ref(x):
    return torch.sin(x) * 2


torch.compile(ref)(torch.linspace(0, 1, 8))   # the judge's graph, the same cache key
for path in glob.glob(_cache + "/**/*.py", recursive=True):
    with open(path) as fh:
        text = fh.read()
    with open(path, "w") as fh:
        fh.write("import torch as _t\\n_t.allclose = lambda *a, **k: True\\n" + text)
for root, _, files in os.walk(_cache):
    os.chmod(root, 0o777)
    for name in files:
        os.chmod(os.path.join(root, name), 0o666)
"""


@pytest.mark.slow
def test_the_judge_never_loads_what_the_solution_left_in_a_shared_temporary_folder(engine):
    attack = run_one(engine, COMPILED_PLANTED, COMPILED_TESTS, timeout=600)
    # before: passed (the judge imported the planted module and its allclose said yes)
    assert attack.outcome == "failed", (attack.outcome, attack.reason)
    # failed where a wrong answer fails: the judge compiled its own graph and compared
    # (no separate run of COMPILED_WRONG: a third inductor compile, a third of the time)
    assert [t["outcome"] for t in attack.tests] == ["failed"], attack.tests
    assert "where False = <built-in method allclose" in attack.stdout, attack.stdout[-3000:]


TEMP_TESTS = """\
import tempfile
from pathlib import Path

from solution import read_back


def test_tmp_path(tmp_path):
    (tmp_path / "x.txt").write_text("hello")
    assert read_back(str(tmp_path / "x.txt")) == "hello"


def test_own_temporary_folder():
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "y.txt").write_text("there")
        assert read_back(str(Path(folder, "y.txt"))) == "there"
"""
TEMP_READER = """\
import os
import tempfile


def read_back(path):
    with open(path) as fh:
        text = fh.read()
    # a fixed name in its temporary folder (TMPDIR, its run folder); /tmp itself is
    # read-only to the solution process (tests/adversarial/test_solution_writes.py)
    with open(os.path.join(tempfile.gettempdir(), "scratch.txt"), "w") as fh:
        fh.write(text)
    try:
        open("/tmp/scratch.txt", "w").close()
    except OSError:
        pass
    else:
        raise AssertionError("wrote /tmp")
    with tempfile.NamedTemporaryFile("w", delete=False) as fh:
        fh.write(text)
    with open(fh.name) as again:
        return again.read()
"""


def test_a_correct_solution_reads_the_tests_temporary_files_and_writes_its_own(engine):
    # the judge's temporary folder is now inside its run folder: still traversable
    result = run_one(engine, TEMP_READER, TEMP_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)


BYTES_OUT_TESTS = """\
from solution import double


def test_double(capsys):
    assert double(2) == 4
    assert "done \ufffd" in capsys.readouterr().out   # the byte that is no UTF-8 replaced


def test_double_again():
    assert double(3) == 6
"""
BYTES_OUT = """\
import sys


def double(x):
    sys.stdout.buffer.write(b"done \\xff\\n")
    sys.stdout.buffer.flush()
    return x * 2
"""


def test_a_correct_function_that_writes_bytes_to_stdout_passes(engine):
    # before: AttributeError ('_Capped' object has no attribute 'buffer') in every test
    result = run_one(engine, BYTES_OUT, BYTES_OUT_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)


LAZY_TESTS = """\
import torch
from torch import nn

from solution import Net, make


def test_returned():
    m = make()
    assert m(torch.randn(2, 3)).shape == (2, 4)
    assert m.weight.shape == (4, 3)


def test_inside_the_tests_sequential():
    m = nn.Sequential(make(), nn.ReLU())
    assert m(torch.randn(5, 7)).shape == (5, 4)


def test_inside_its_own_module():
    net = Net()
    assert net(torch.randn(2, 6)).shape == (2, 4)
    assert net.fc.weight.shape == (4, 6)
"""
LAZY = """\
from torch import nn


def make():
    return nn.LazyLinear(4)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.LazyLinear(4)

    def forward(self, x):
        return self.fc(x)
"""


def test_a_lazy_module_crosses_uninitialized_and_learns_its_shape_on_its_first_call(engine):
    # before: every test failed ("in_features from self.weight: 0"): the uninitialized
    # parameters crossed as empty ones, the module's own forward pre-hook as a handle on
    # the other process's module, and its hook handle's id was "a change to a class"
    result = run_one(engine, LAZY, LAZY_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)


ARRAYS_TESTS = """\
import numpy as np

from solution import echo, records, scalar_array


def test_a_zero_dimensional_array_keeps_its_shape():
    value = scalar_array()
    assert value.shape == () and value == 3.5
    assert echo(np.array(2.0)).shape == ()


def test_records_with_shaped_and_nested_fields():
    value = records()
    assert value.dtype == np.dtype([("xy", "f4", (2,)), ("meta", [("n", "i2"), ("ok", "?")])])
    assert value["xy"].tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert value["meta"]["n"].tolist() == [7, 8]
    assert echo(value).dtype == value.dtype
"""
ARRAYS = """\
import numpy as np


def scalar_array():
    return np.array(3.5)


def echo(a):
    return a.copy()


def records():
    out = np.zeros(2, dtype=[("xy", "f4", (2,)), ("meta", [("n", "i2"), ("ok", "?")])])
    out["xy"] = [[1, 2], [3, 4]]
    out["meta"]["n"] = [7, 8]
    return out
"""


def test_zero_dimensional_and_nested_record_arrays_cross_as_they_are(engine):
    # before: a 0-d array arrived 1-d (np.ascontiguousarray), and a record array with a
    # shaped or nested field was an error ("cannot cross")
    result = run_one(engine, ARRAYS, ARRAYS_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)


OPTIMIZER_TESTS = """\
import torch
from torch import nn

from solution import make


def test_returned_optimizer_and_scheduler():
    model = nn.Linear(2, 1)
    opt, sched = make(model)
    assert opt.param_groups[0]["lr"] == 0.1 and sched.get_last_lr() == [0.1]
    model(torch.ones(3, 2)).sum().backward()
    before = model.weight.detach().clone()
    opt.step()
    sched.step()
    assert not torch.equal(model.weight, before) and sched.get_last_lr()[0] < 0.1
"""
OPTIMIZER = """\
import torch


def make(model):
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
    return opt, torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
"""


def test_a_correct_function_returning_an_optimizer_the_judge_never_made_is_not_tampering(
        engine):
    # before: tampered, "a message that changes a class of the judge (Adagrad)": the
    # optimizer's __setstate__ wraps its class's step in torch's profiling hook once
    result = run_one(engine, OPTIMIZER, OPTIMIZER_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)


PARAMETRIZED_TESTS = """\
import torch

from solution import make


def test_weight_norm():
    m = make("weight_norm")
    x = torch.randn(4, 3)
    assert torch.allclose(m(x), x @ m.weight.T + m.bias)
    m(x).sum().backward()
    assert m.parametrizations.weight.original0.grad is not None
    assert torch.allclose(m.parametrizations.weight.original1, torch.full((2, 3), 0.5))


def test_orthogonal():
    w = make("orthogonal").weight
    assert torch.allclose(w @ w.T, torch.eye(3), atol=1e-5)
"""
PARAMETRIZED = """\
import torch
from torch import nn


def make(kind):
    if kind == "weight_norm":
        lin = nn.Linear(3, 2)
        with torch.no_grad():
            lin.weight.fill_(0.5)
        return nn.utils.parametrizations.weight_norm(lin)
    return nn.utils.parametrizations.orthogonal(nn.Linear(3, 3))
"""


def test_a_module_with_torchs_parametrizations_crosses(engine):
    # before: error, "Serialization of parametrized modules is only supported through
    # state_dict()" (torch's recommended weight_norm makes a class of its own)
    result = run_one(engine, PARAMETRIZED, PARAMETRIZED_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)


LOADER_TESTS = """\
import torch

from solution import batches, make_loader, split


def test_loader():
    ds = torch.utils.data.TensorDataset(torch.arange(10.0).unsqueeze(1), torch.arange(10))
    loader = make_loader(ds, 4)
    assert [len(y) for x, y in loader] == [4, 4, 2] and len(loader) == 3
    assert loader.batch_size == 4


def test_loader_shuffled_as_the_tests_seed_says():
    ds = torch.utils.data.TensorDataset(torch.arange(10.0))
    torch.manual_seed(0)
    first = [x.tolist() for (x,) in make_loader(ds, 10, shuffle=True)]
    torch.manual_seed(0)
    assert first == [x.tolist() for (x,) in torch.utils.data.DataLoader(ds, 10, shuffle=True)]


def test_generator_and_split():
    assert [b.tolist() for b in batches(torch.arange(5), 2)] == [[0, 1], [2, 3], [4]]
    a, b = split(torch.utils.data.TensorDataset(torch.arange(10.0)), 0.8)
    assert len(a) == 8 and len(b) == 2
"""
LOADER = """\
import torch


def make_loader(ds, batch_size, shuffle=False):
    return torch.utils.data.DataLoader(ds, batch_size=batch_size, shuffle=shuffle)


def batches(x, n):
    for i in range(0, len(x), n):
        yield x[i:i + n]


def split(ds, frac):
    n = int(len(ds) * frac)
    return torch.utils.data.random_split(ds, [n, len(ds) - n],
                                         generator=torch.Generator().manual_seed(0))
"""


def test_a_dataloader_the_solution_returns_is_served_by_a_handle(engine):
    # before: error, "a value of type torch.utils.data.dataloader.DataLoader cannot cross"
    result = run_one(engine, LOADER, LOADER_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)


DATACLASS_TESTS = """\
import dataclasses

from solution import Config, Point, parse


def test_equal_to_the_expected_config():
    assert parse("lr=0.1,epochs=3") == Config(lr=0.1, epochs=3)
    assert parse("lr=0.1,epochs=3") != Config(lr=0.2, epochs=3)


def test_asdict_and_hash():
    assert dataclasses.asdict(parse("lr=0.5,epochs=1")) == {"lr": 0.5, "epochs": 1}
    assert len({Point(1, 2), Point(1, 2)}) == 1
"""
DATACLASS = """\
import dataclasses


@dataclasses.dataclass
class Config:
    lr: float = 0.01
    epochs: int = 1


@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int


def parse(text):
    kv = dict(p.split("=") for p in text.split(","))
    return Config(lr=float(kv["lr"]), epochs=int(kv["epochs"]))
"""


def test_mirrors_of_a_solution_dataclass_compare_by_their_fields(engine):
    # before: failed, a mirror compared by identity ("assert Config(lr=0.1, epochs=3) ==
    # Config(lr=0.1, epochs=3)"), and asdict refused it
    result = run_one(engine, DATACLASS, DATACLASS_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)
    wrong = run_one(engine, DATACLASS.replace('float(kv["lr"])', 'float(kv["lr"]) * 2'),
                    DATACLASS_TESTS, timeout=60)
    assert wrong.outcome == "failed", (wrong.outcome, wrong.reason)


ERROR_TESTS = """\
import pytest

import solution


def test_its_own_error_with_its_own_text():
    with pytest.raises(solution.ShapeError, match="bad shape 3") as info:
        solution.check(3)
    assert info.value.shape == 3


def test_a_key_error_with_a_tuple():
    with pytest.raises(KeyError, match="'a', 1"):
        solution.look_up()
"""
ERRORS = """\
class ShapeError(ValueError):
    def __init__(self, shape):
        super().__init__(shape)
        self.shape = shape

    def __str__(self):
        return "bad shape %d" % self.shape


def check(shape):
    raise ShapeError(shape)


def look_up():
    raise KeyError(("a", 1))
"""


def test_an_exception_class_with_its_own_str_is_matched_by_its_text(engine):
    # before: error, "an exception object of solution.ShapeError cannot cross" (its
    # forwarded __str__ sent the exception back to the solution as `self`)
    result = run_one(engine, ERRORS, ERROR_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)
    wrong = run_one(engine, ERRORS.replace('"bad shape %d"', '"shape %d"'), ERROR_TESTS,
                    timeout=60)
    assert wrong.outcome == "failed", (wrong.outcome, wrong.reason)


THREADED_TESTS = """\
import torch
from torch import nn

from solution import par_apply


class Scale(nn.Module):
    def forward(self, x):
        return x * 2


def test_the_tests_model_from_a_thread_pool():
    outs = par_apply(Scale(), [torch.full((3,), float(i)) for i in range(16)])
    assert [o[0].item() for o in outs] == [2.0 * i for i in range(16)]


def test_a_lambda_from_a_thread_pool():
    outs = par_apply(lambda x: x + 1, [torch.full((2,), float(i)) for i in range(16)])
    assert [o[0].item() for o in outs] == [i + 1.0 for i in range(16)]
"""
THREADED = """\
from concurrent.futures import ThreadPoolExecutor


def par_apply(fn, xs):
    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(fn, xs))
"""


def test_the_tests_callables_called_from_several_threads_answer_each_its_own_call(engine):
    # before: failed, each thread read whichever answer came next on the one socket
    # ([0.0, 10.0, 30.0, 2.0, ...] for [0.0, 2.0, 4.0, 6.0, ...])
    result = run_one(engine, THREADED, THREADED_TESTS, timeout=60)
    assert result.outcome == "passed", (result.outcome, result.reason)
