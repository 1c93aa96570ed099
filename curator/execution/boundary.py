"""The boundary between the judge and the judged: two processes, one channel, data only.

A run of a self-contained problem is two processes. The judge runs pytest, the hidden
test module and the reporter; no solution code ever executes in it. The solution runs in
its own process (another uid, forked from a zygote that never saw a job), which imports
the candidate and serves calls. In the judge, `solution` is a proxy module: its functions,
classes and the instances those classes make are handles whose calls travel over one
socket to the solution process and come back as data.

What crosses is data, never objects of the solution: tensors (dtype, shape, bytes,
requires_grad, grad), numpy arrays (of Python objects too, item by item), Python scalars
and containers, dtypes and devices, and instances of classes of the allowed libraries,
rebuilt by the judge from its own class definitions. The judge decodes with a restricted unpickler that resolves only classes of
the allowed libraries (and a few rebuild functions of this module), never a function by
name, so a message cannot run code in the judge. A value of a solution-defined subclass of
a value type (a Tensor, float, list or dict subclass) is rebuilt as its nearest allowed
base; the run records that it happened. An instance of a solution-defined class is a
mirror: its state (as data) lives in the judge, its methods run in the solution process
with that state sent along and copied back. Arguments the solution mutates (tensors in
place, a module's parameters, an optimizer's state, lists and dicts) are copied back into
the judge's own objects. A tensor the solution computed from the judge's tensors keeps its
gradient path: its backward asks the solution process for the vector-Jacobian product.
Callables of the judge the solution cannot rebuild (a test's own function or class) are
handles the other way: calling one runs the judge's object in the judge.

A message that breaks the protocol or names something that is not data is tampering; a
value with no data form (an open file, a module) ends the run as an error naming its type.
"""

from __future__ import annotations

import builtins
import collections
import collections.abc
import contextlib
import copyreg
import dataclasses
import enum
import fcntl
import functools
import hashlib
import inspect
import io
import json
import logging
import math
import os
import pickle
import socket
import struct
import sys
import tempfile
import threading
import time
import traceback
import types
import warnings
import weakref
import zlib

from curator.execution import autograd_across, call_files, stacks, stores, tf_graphs
from curator.execution.verdict import CANNOT_CROSS, CANNOT_SEND

try:
    import torch
except Exception:  # a judge without torch still judges plain Python
    torch = None
try:
    import numpy as np
except Exception:
    np = None

# The largest message either side reads: a bound on what a solution can make the judge
# hold, above what real repositories send (GPflow's Monte Carlo likelihood tests hand
# their callback 672 MB of samples; 512 MB ended them as a boundary error).
MAX_MESSAGE = 1 << 30
PROTOCOL = 5
# The libraries whose classes the judge rebuilds from its own definitions (the standard
# library's exact numbers too: a Fraction or Decimal pickles as its class and its digits).
ALLOWED_ROOTS = {"torch", "numpy", "collections", "pathlib", "fractions", "decimal"}
# Closures cross by value (`closure_name`) only from the packages a repository run adds to
# these (its own, its test libraries): made in the judge from its own code with cells the
# solution filled, a closure of torch or numpy (which holds closures that set process-wide
# state: default dtype, grad mode, seeds) would be trusted code run on the solution's data.
BASE_ROOTS = frozenset(ALLOWED_ROOTS)
DENIED_PREFIXES = ("torch.package", "torch.jit", "torch.fx", "torch.distributed",
                   "torch.multiprocessing", "torch.hub", "torch.utils.cpp_extension",
                   "torch._dynamo", "torch._inductor", "torch.library", "torch._ops",
                   "torch.ops", "torch.serialization", "torch.utils.benchmark",
                   "torch.compiler", "torch.export", "torch._export", "torch.onnx",
                   "torch.utils.data.dataloader", "numpy.ctypeslib", "numpy.lib.npyio",
                   "numpy.f2py", "numpy.distutils", "numpy.testing", "torch.testing",
                   "collections.abc",
                   # modes, not values: made, set_grad_enabled(False) turns autograd off
                   # in the judge, set_detect_anomaly(True) turns anomaly checks on
                   "torch.autograd.grad_mode", "torch.autograd.anomaly_mode",
                   "torch.autograd.forward_ad", "torch.backends", "torch.utils._contextlib")
# Classes of the standard library that are plain values, rebuilt by the judge from its own
# definitions: configurations passed as `args` (argparse.Namespace), records, a function's
# signature (nncf's NNCFNetwork keeps its model's forward signature). One is listed when
# (1) making it from its pickled form runs only its own constructor and `__setstate__`,
# which check and store fields (no file, process, thread, import or process-wide state),
# (2) it holds no resource and has no `__del__`, (3) its comparisons compare its fields
# (never a wildcard: unittest.mock.ANY equals everything, and is not listed), and (4) the
# classes its fields are made of go with it (inspect's parameter kinds, an enum, and its
# `empty` sentinel class: a default `is inspect.Parameter.empty` holds in the judge).
# tests/adversarial/test_boundary_decoding.py checks (2) and (4) for every entry.
STDLIB_VALUE_CLASSES = {("types", "SimpleNamespace"), ("argparse", "Namespace"),
                        ("datetime", "date"), ("datetime", "time"),
                        ("datetime", "datetime"), ("datetime", "timedelta"),
                        ("datetime", "timezone"), ("uuid", "UUID"), ("random", "Random"),
                        ("inspect", "Signature"), ("inspect", "Parameter"),
                        ("inspect", "BoundArguments"), ("inspect", "_ParameterKind"),
                        ("inspect", "_empty")}
DENIED_CLASSES = {"numpy.memmap", "numpy.lib.format", "torch.storage._LegacyStorage",
                  # a tracer's symbolic values: each of their comparisons asks their node,
                  # which a reply could make an object of the solution's (a SymFloat over
                  # one whose `eq` and `bool_` said yes equalled every expected float)
                  "torch.SymInt", "torch.SymFloat", "torch.SymBool"}
BUILTIN_CLASSES = {"list", "dict", "set", "frozenset", "tuple", "slice", "complex",
                   "bytearray", "range", "object", "bool", "int", "float", "str", "bytes",
                   "NoneType", "Ellipsis", "ellipsis"}
VALUE_BASES = (bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set,
               frozenset)
# Methods of solution classes that the judge's mirrors forward. Comparisons, hashing,
# truth and arithmetic are not: the judge's own comparisons never ask the solution. Nor
# is membership (`__contains__` is handed the test's value and answers about it): `x in
# mirror` iterates the mirror (its forwarded __iter__ or __getitem__) and compares the
# items it gets, as data, in the judge.
FORWARDED_DUNDERS = {"__call__", "__len__", "__getitem__", "__setitem__", "__delitem__",
                     "__iter__", "__next__", "__enter__", "__exit__", "__repr__",
                     "__str__"}


class BoundaryError(BaseException):
    """Raised in the judge when the boundary cannot serve a call (the solution process
    ended, or sent something that is not data). A BaseException: no `except Exception`
    or `pytest.raises(Exception)` in a test can take it for the solution's answer."""


class CannotCross(Exception):
    """A value that has no data form (raised on the side that encodes it)."""


class CannotSend(CannotCross):
    """A judge value the solution process cannot be given (raised in the judge's encoder):
    the run ends as this tool's limit, never as the solution's answer."""


class NotData(Exception):
    """A message names something that is not data (raised in the judge's decoder)."""


def _root(name):
    return (name or "").split(".")[0]


def _module_denied(module):
    # asked for every object encoded: a name's answer is kept
    return _name_denied(module) if _TYPE(module) is str else _name_denied.__wrapped__(module)


@functools.lru_cache(maxsize=4096)
def _name_denied(module):
    return any(module == p or module.startswith(p + ".") for p in DENIED_PREFIXES)


def _module_allowed(module):
    return _root(module) in ALLOWED_ROOTS and not _module_denied(module)


def _guard_class(module, cls):
    """torch._C's private classes are dispatcher guards (`_ExcludeDispatchKeyGuard`,
    `_AutoDispatchBelowAutograd`, `_DisableTorchDispatch`): made, they change how every
    torch call in the process dispatches for as long as the object lives."""
    return (module == "torch._C" or module.startswith("torch._C.")) and \
        str(getattr(cls, "__name__", "")).startswith("_")


def allowed_class(cls):
    """A class the judge may rebuild an instance of from its own definition."""
    if not isinstance(cls, type):
        return False
    module = getattr(cls, "__module__", "") or ""
    if isinstance(module, str) and _guard_class(module, cls):
        return False
    if module == "builtins":
        return cls.__name__ in BUILTIN_CLASSES or issubclass(cls, BaseException)
    if (module, getattr(cls, "__qualname__", None)) in STDLIB_VALUE_CLASSES:
        return True
    if not isinstance(module, str) or not _module_allowed(module):
        return False
    name = "%s.%s" % (module, getattr(cls, "__qualname__", ""))
    if name in DENIED_CLASSES or issubclass(cls, types.ModuleType):
        return False
    if np is not None and issubclass(cls, np.memmap):
        return False
    return True


def denied_class(cls):
    """A class the judge never rebuilds, whatever a run allows: loaders, compilers,
    memory maps (DENIED_PREFIXES, DENIED_CLASSES)."""
    module = getattr(cls, "__module__", "") or ""
    if not isinstance(module, str):
        return False
    if _module_denied(module) or _guard_class(module, cls):
        return True
    return "%s.%s" % (module, getattr(cls, "__qualname__", "")) in DENIED_CLASSES or \
        (np is not None and isinstance(cls, type) and issubclass(cls, np.memmap))


def nearest_allowed_base(cls):
    for klass in cls.__mro__:
        if allowed_class(klass) and not _solution_defined(klass) and \
                not made_at_run_time(klass):
            return klass
    return object


def made_at_run_time(cls):
    """Whether `cls` is a class its module does not hold under its name, pickled by that
    name all the same (no reduction of its own): one a library made while the process
    ran, as nncf's NNCFNetwork makes `type(model)` a new class of NNCFNetwork and the
    model's class, named and placed as the model's class. The other process has no such
    class: an instance of it is a mirror, as one of a solution class, on the nearest base
    both have (it ended the run: "Can't pickle <class ...>: it's not the same object")."""
    module, qualname = getattr(cls, "__module__", None), getattr(cls, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or \
            module not in sys.modules or not isinstance(cls, type) or \
            not cls.__flags__ & _HEAPTYPE:
        return False   # (a compiled type, builtins' NoneType: pickle has its own ways)
    try:
        default = cls.__reduce_ex__ is object.__reduce_ex__ and \
            cls.__reduce__ is object.__reduce__
    except Exception:   # noqa: BLE001 - a class whose attributes raise
        return False
    return default and not _held_as(module, qualname, cls)


# In the solution process of a repository run: the patched module and the names in it
# that are the candidate's (its target and its helpers), never rebuilt by the judge from
# the repository's definitions of the same name.
CANDIDATE = {"module": None, "names": frozenset()}


# -- tensors and arrays as bytes --------------------------------------------------------


def _own_bytes(flat):
    """The bytes of a contiguous CPU tensor this module just made: through numpy when it
    is there, else read at its address (torch does not need numpy, and an environment
    whose repository declares none has none: pytorch3d's)."""
    if np is not None:
        return flat.view(torch.uint8).numpy().tobytes()
    import ctypes

    return ctypes.string_at(flat.data_ptr(), flat.numel() * flat.element_size())


def _tensor_state(t, seen=None):
    """What tells whether the solution changed a tensor of the judge's: its version, grad,
    requires_grad and a digest of its values. The version alone misses writes through
    `.data` and `.numpy()`, which torch does not count (a target network's soft update,
    `t.data.copy_(tau * s.data + (1 - tau) * t.data)`, never came back to the judge).
    Given the state it had (`seen`), the digest is computed only when the rest is equal."""
    state = (t._version, id(t.grad), t.requires_grad)
    if seen is not None and seen[:3] != state:
        return state
    return state + (_values_digest(t),)


def _values_digest(t):
    """The digest of a dense CPU tensor's values, with its shape, strides and dtype; None
    for one with no values here (meta, sparse, quantized, another device)."""
    with torch._C.DisableTorchFunction():
        data = torch.Tensor.detach(t)
        if data.layout != torch.strided or data.is_quantized or data.device.type != "cpu":
            return None
        shape, strides, dtype = tuple(data.shape), data.stride(), str(data.dtype)
        flat = data.contiguous().reshape(-1)
        if not flat.numel():
            return shape, strides, dtype
        raw = _own_bytes(flat.view(torch.uint8)) if np is None else \
            flat.view(torch.uint8).numpy()
    return shape, strides, dtype, _checksum(raw)


def _checksum(raw):
    """What tells the solution's own copy of a judge's value changed: a CRC-32 with the
    length, no cryptographic digest (blake2b was a third of a solution process's time in
    runs that pass a large buffer on every call). A solution that contrived a collision
    would only keep the judge's values as they were, which it may do openly."""
    return len(raw), zlib.crc32(raw)


def _uninitialized(t):
    mixin = getattr(getattr(torch, "nn", None), "parameter", None)
    mixin = getattr(mixin, "UninitializedTensorMixin", None)
    return mixin is not None and isinstance(t, mixin)


def _tensor_form(data):
    """What a tensor's values as bytes leave out and the other side makes again: its
    sparse layout, per-tensor quantization and channels-last memory format (a correct
    `x.to_sparse()`, `quantize_per_tensor` or `.contiguous(memory_format=
    torch.channels_last)` failed the tests that check them)."""
    form = {}
    if _uninitialized(data):
        # a lazy module's parameter or buffer before its first call (nn.LazyLinear):
        # no values, its shape decided by that call
        return {"uninitialized": "param" if isinstance(data, torch.nn.Parameter)
                else "buffer"}
    if data.layout in _SPARSE_LAYOUTS.values():
        form["layout"] = str(data.layout).replace("torch.", "")
    if data.is_quantized:
        qdtype = str(data.dtype).replace("torch.", "")
        if data.qscheme() == torch.per_channel_affine:
            # per channel (a correct `quantize_per_channel` crossed dequantized, and
            # `out.is_quantized` failed): its scales, zero points and axis
            form["quant_channel"] = (
                [float(v) for v in data.q_per_channel_scales().tolist()],
                [int(v) for v in data.q_per_channel_zero_points().tolist()],
                int(data.q_per_channel_axis()), qdtype)
            return form
        if data.qscheme() != torch.per_tensor_affine:
            return form or None
        form["quant"] = (float(data.q_scale()), int(data.q_zero_point()), qdtype)
    if data.layout == torch.strided and not data.is_quantized and data.dim() in (4, 5) \
            and not data.is_contiguous():
        fmt = "channels_last" if data.dim() == 4 else "channels_last_3d"
        if data.is_contiguous(memory_format=_MEMORY_FORMATS[fmt]):
            form["memory_format"] = fmt
    return form or None


def _tensor_record(t):
    """(dtype, shape, bytes, requires_grad, is_parameter, grad, type name, form) of a
    tensor, read without running any __torch_function__ of a subclass."""
    with torch._C.DisableTorchFunction():
        data = torch.Tensor.detach(t)
        form = _tensor_form(t if _uninitialized(t) else data) \
            if data.device.type != "meta" else None
        if data.layout != torch.strided:
            data = data.to_dense()
        meta = data.device.type == "meta"   # shape and dtype only: no values to send
        if data.device.type not in ("cpu", "meta"):
            data = data.cpu()
        if data.is_quantized:
            data = data.dequantize()
        data = data.resolve_conj().resolve_neg()
        raw = None if meta else b""
        if data.numel() and not meta:
            flat = torch.empty(data.numel(), dtype=data.dtype)
            flat.copy_(data.reshape(-1))
            raw = _own_bytes(flat)
        # a non-leaf's .grad is None unless it retains it, and reading it warns into the
        # run's stderr (every failure log would carry that warning)
        base = torch._C.TensorBase
        grad = base.grad.__get__(t) if base.is_leaf.__get__(t) or \
            base.retains_grad.__get__(t) else None
        requires_grad = bool(torch._C.TensorBase.requires_grad.__get__(t))
    kind = "param" if isinstance(t, torch.nn.Parameter) else "tensor"
    exact = type(t) in (torch.Tensor, torch.nn.Parameter) or form is not None and \
        "uninitialized" in form
    name = None if exact else "%s.%s" % (type(t).__module__, type(t).__qualname__)
    return (str(data.dtype).replace("torch.", ""), tuple(data.shape), raw, requires_grad,
            kind, grad, name, form)


_SPARSE_LAYOUTS = {} if torch is None else {
    "sparse_coo": torch.sparse_coo, "sparse_csr": torch.sparse_csr,
    "sparse_csc": torch.sparse_csc}
_MEMORY_FORMATS = {} if torch is None else {
    "channels_last": torch.channels_last, "channels_last_3d": torch.channels_last_3d}
_QUANTIZED = ("quint8", "qint8", "qint32")


def _formed(value, form):
    """`value` (dense, its values) in the form `_tensor_form` described."""
    if not isinstance(form, dict) or not set(form) <= {
            "layout", "quant", "quant_channel", "memory_format", "uninitialized"}:
        raise NotData("a tensor whose form is not data")
    try:
        channel = form.get("quant_channel")
        if channel is not None:
            scales, zeros, axis, qdtype = channel
            if type(axis) is not int or not 0 <= axis < value.dim() or \
                    qdtype not in _QUANTIZED or type(scales) is not list or \
                    type(zeros) is not list or \
                    not len(scales) == len(zeros) == value.shape[axis] or \
                    not all(type(v) is float for v in scales) or \
                    not all(type(v) is int for v in zeros):
                raise ValueError("per-channel quantization %r" % (channel,))
            value = torch.quantize_per_channel(
                value, torch.tensor(scales, dtype=torch.float64),
                torch.tensor(zeros, dtype=torch.int64), axis, getattr(torch, qdtype))
        quant = form.get("quant")
        if quant is not None:
            scale, zero, qdtype = quant
            if type(scale) is not float or type(zero) is not int or \
                    qdtype not in _QUANTIZED:
                raise ValueError("quantization %r" % (quant,))
            value = torch.quantize_per_tensor(value, scale, zero, getattr(torch, qdtype))
        fmt = form.get("memory_format")
        if fmt is not None:
            value = value.contiguous(memory_format=_MEMORY_FORMATS[fmt])
        layout = form.get("layout")
        if layout is not None:
            value = {"sparse_coo": value.to_sparse, "sparse_csr": value.to_sparse_csr,
                     "sparse_csc": value.to_sparse_csc}[layout]()
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise NotData("a tensor of form %r: %s" % (form, exc)) from None
    return value


def _make_tensor(dtype_name, shape, raw, requires_grad, kind, grad, form=None):
    # torch's own operations, outside any torch function mode (pyro's conftest sets the
    # default device, a mode every operation went through) or subclass
    with torch._C.DisableTorchFunction():
        return _make_plain_tensor(dtype_name, shape, raw, requires_grad, kind, grad, form)


def _make_plain_tensor(dtype_name, shape, raw, requires_grad, kind, grad, form):
    dtype = getattr(torch, str(dtype_name), None)
    if not isinstance(dtype, torch.dtype):
        raise NotData("a tensor of unknown dtype %r" % (dtype_name,))
    shape = tuple(int(s) for s in shape)
    count = 1
    for size in shape:
        if size < 0:
            raise NotData("a tensor of negative size")
        count *= size
    itemsize = torch.empty((), dtype=dtype).element_size()
    if raw is None:
        value = torch.empty(shape, dtype=dtype, device="meta")
    elif not isinstance(raw, (bytes, bytearray)) or len(raw) != count * itemsize:
        raise NotData("a tensor whose bytes do not match its shape")
    elif count == 0:
        value = torch.empty(shape, dtype=dtype)
    else:
        value = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype).reshape(shape)
    if isinstance(form, dict) and "uninitialized" in form:
        return _uninitialized_tensor(form, value.dtype, requires_grad)
    if form is not None and raw is not None:
        value = _formed(value, form)
    can_grad = (value.is_floating_point() or value.is_complex()) and not value.is_quantized
    if kind == "param":
        value = torch.nn.Parameter(value, requires_grad=bool(requires_grad) and can_grad)
    elif requires_grad and can_grad:
        value.requires_grad_(True)
    if grad is not None:
        if not isinstance(grad, torch.Tensor) or grad.shape != value.shape:
            raise NotData("a tensor whose grad does not match it")
        grad = grad.to(value.dtype) if grad.dtype != value.dtype else grad
        try:
            value.grad = grad
        except RuntimeError as exc:   # a sparse grad of a sparse tensor, say
            raise NotData("a tensor whose grad does not match it: %s" % exc) from None
    return value


def _uninitialized_tensor(form, dtype, requires_grad):
    parameter = torch.nn.parameter
    if set(form) != {"uninitialized"} or form["uninitialized"] not in ("param", "buffer"):
        raise NotData("a tensor whose form is not data")
    if form["uninitialized"] == "param":
        return parameter.UninitializedParameter(requires_grad=bool(requires_grad),
                                                dtype=dtype)
    return parameter.UninitializedBuffer(requires_grad=bool(requires_grad), dtype=dtype)


def _array_record(a):
    if a.dtype.hasobject:
        raise CannotCross("a numpy array of dtype %s" % a.dtype)
    # (np.ascontiguousarray makes a 0-d array 1-d: a correct np.array(3.5) arrived as
    # shape (1,))
    data = a if a.flags["C_CONTIGUOUS"] else a.copy(order="C")
    # a structured dtype (records: a training history) as its fields' names, formats
    # and shapes, nested records as lists of the same: strings and ints only
    kind = data.dtype.str
    if data.dtype.fields is not None:
        kind = list(data.dtype.descr)
        if not _record_fields(kind):
            raise CannotCross("a numpy array of dtype %s (titled fields)" % a.dtype)
    return (kind, tuple(data.shape), data.tobytes())


def _record_fields(fields, depth=0):
    """Whether `fields` is a structured dtype's description made of data only: a list of
    (name, format[, shape]) with a name string, a format string or such a list, a shape
    of ints."""
    return isinstance(fields, list) and bool(fields) and depth < 8 and all(
        isinstance(f, tuple) and len(f) in (2, 3) and isinstance(f[0], str) and (
            isinstance(f[1], str) or _record_fields(f[1], depth + 1)) and (
            len(f) == 2 or (isinstance(f[2], tuple) and all(type(n) is int for n in f[2])))
        for f in fields)


def _array_fingerprint(a):
    return a.shape, a.strides, a.dtype.str, _checksum(a.tobytes())


def _record_dtype(fields):
    """A structured dtype from its description (`_record_fields`); nothing else is data."""
    if not _record_fields(fields):
        raise NotData("a numpy array whose dtype is not data")
    try:
        return np.dtype(fields)
    except (TypeError, ValueError) as exc:
        raise NotData("a numpy array of dtype %r: %s" % (fields, exc)) from None


def _make_array(dtype_str, shape, raw):
    dtype = _record_dtype(dtype_str) if isinstance(dtype_str, list) else \
        np.dtype(str(dtype_str))
    if dtype.hasobject:
        raise NotData("a numpy array of dtype %s" % dtype)
    shape = tuple(int(s) for s in shape)
    count = math.prod(shape)
    if not isinstance(raw, (bytes, bytearray)) or len(raw) != count * dtype.itemsize:
        raise NotData("an array whose bytes do not match its shape")
    return np.frombuffer(bytearray(raw), dtype=dtype).reshape(shape).copy() if count \
        else np.empty(shape, dtype=dtype)


# -- the rebuild functions a message may name (the judge resolves these, nothing else) --

_LINK = [None]  # the one link of this process (judge or solution side)


def _t(dtype_name, shape, raw, requires_grad, kind, grad, note, ref, gout, origin=None,
       form=None):
    """A tensor from the other side. ref: the judge's own tensor it came from (unchanged
    ones travel as _tref); gout: its place among outputs that keep a gradient path;
    origin (judge to solution): "graph" or "leaf" when it required grad in the judge."""
    link = _LINK[0]
    value = _make_tensor(dtype_name, shape, raw, requires_grad, kind, grad, form)
    if link is not None:
        value = link.received_tensor(value, note, ref, gout, origin)
    return value


def _tref(index):
    return _LINK[0].request_tensor(index)


def _tv(index, shape, stride, offset, values):
    """A view the solution returned of a tensor of the judge's that the call's request
    holds (`SolutionLink.request_view`), as that view of the judge's own tensor: a copy
    the judge made instead held no memory of the argument, so a wrong function returning
    `x.view(-1)` passed a test that writes into the result and checks `x` is untouched,
    and a right one returning a view failed a test that checks it is one. Only of a
    contiguous strided tensor of the judge's that needs no grad, inside its elements;
    of any other (the solution's copy of a transposed tensor is contiguous: the same
    view does not exist here) the values it carries too (`values`, `_t`'s record), a
    tensor of its own, as before."""
    link = _LINK[0]
    request = getattr(link, "request", None)
    if type(index) is not int or type(shape) is not tuple or type(stride) is not tuple or \
            len(shape) != len(stride) or len(shape) > 64 or type(offset) is not int or \
            not all(type(n) is int and n >= 0 for n in shape + stride) or offset < 0 or \
            type(values) is not tuple or type(request) is not list or \
            not 0 <= index < len(request):
        raise NotData("a view of a tensor the judge never sent")
    base = request[index]
    if torch is None or type(base) is not torch.Tensor or base.requires_grad or \
            base.layout != torch.strided or not base.is_contiguous() or \
            (all(shape) and offset + sum((n - 1) * step for n, step in zip(shape, stride))
             >= base.numel()):
        return _t(*values)
    return base.as_strided(shape, stride, base.storage_offset() + offset)


# A large tensor of the judge's that does not require grad (a memory bank, a data set, an
# image) crosses once while it stays as it was: a top-level call sends it with a token
# (_tt), and the next top-level call names the token (_tk) when the judge's tensor is
# unchanged since and the reply to the earlier call gave it back unchanged (_tref). Both
# sides keep only the tokens of the last top-level call, so each knows which the other
# has without a message about it. Solution side only: the judge never decodes these.
STICKY_MIN_BYTES = 1 << 16


def _tt(token, *record):
    value = _t(*record)
    _LINK[0].kept_token(token, value, record[7])
    return value


def _tk(token, ref):
    return _LINK[0].kept_tensor(token, ref)


def _tsame(index):
    """A judge leaf the open call's request holds already (a parameter of a handle module
    read again: curvlinops' KFAC, under Laplace's KronLLLaplace.fit, matches a layer's
    parameters with those it was given by `data_ptr()`), unchanged on the judge's side
    since it was sent: the copy this process was given then (`JudgeLink.sent_again`).
    Solution side only."""
    request = _LINK[0].request
    if type(index) is not int or not 0 <= index < len(request) or request[index] is None:
        raise NotData("a reference to a tensor this call was never given")
    return request[index]


def _a(dtype_str, shape, raw, note, ref=None):
    """A numpy array. ref (judge to solution only): the judge's own array it copies, so
    the same array sent back unchanged is the judge's again (see _aref)."""
    link = _LINK[0]
    if note and link is not None:
        link.note("%s rebuilt as numpy.ndarray" % note)
    value = _make_array(dtype_str, shape, raw)
    if ref is not None and link is not None:
        value = link.received_array(value, ref)
    return value


def _aref(ref):
    """The judge's own array, sent back unchanged: a test that compares what a mock
    was called with (`assert_called_with(y)`) or checks `result is y` sees its own
    object, as it would in-process."""
    return _LINK[0].request_array(ref)


def _ja(values, weak_type):
    """A jax array the solution sent (`_jax_array`): its values, an ndarray of the message,
    put on the judge's jax's default device with the weak type it had, as jax's own
    reconstruction does. That one (`jax._src.array._reconstruct_array`) calls the
    function its message names and sets the state of what that gives: given a handle's
    rebuild function, it would set the state of an object the judge holds."""
    if np is None or type(values) is not np.ndarray or type(weak_type) is not bool:
        raise NotData("a jax array that is not an array's values")
    jax = sys.modules.get("jax")
    if jax is None:
        if not _module_allowed("jax"):
            raise NotData("a jax array, where jax is no library of the run")
        try:
            jax = _import_for_message("jax")
        except BaseException:   # noqa: BLE001 - a library's SystemExit too
            raise NotData("a jax array, where jax does not import") from None
    value = jax.device_put(values)
    if weak_type:
        value.aval = value.aval.update(weak_type=True)
    return value


def _jax_array(cls):
    """Whether `cls` is jax's concrete array class (a traced value is not)."""
    module = sys.modules.get("jax._src.array")
    return module is not None and cls is getattr(module, "ArrayImpl", None)


def _ao(shape, items, note):
    """A numpy array of Python objects (strings in a DataFrame's column): its elements
    crossed one by one as data, each decoded as any other value."""
    shape = tuple(int(size) for size in shape)
    count = math.prod(shape)
    if np is None or not isinstance(items, list) or len(items) != count:
        raise NotData("an object array whose items do not match its shape")
    if note and _LINK[0] is not None:
        _LINK[0].note("%s rebuilt as numpy.ndarray" % note)
    out = np.empty(count, dtype=object)
    for index, item in enumerate(items):
        out[index] = item
    return out.reshape(shape)


def _value_base(base):
    """A value type, or a library's class on one (collections' Counter, OrderedDict,
    defaultdict and deque, torch.Size): what a solution subclass of it crosses as, with
    its contents. (As a mirror it kept only its `__dict__`: a correct function returning
    its own Counter subclass gave the test an empty Counter.)"""
    return base in VALUE_BASES or (
        isinstance(base, type) and issubclass(base, VALUE_BASES + (collections.deque,))
        and allowed_class(base) and not _solution_defined(base))


def _v(base, value, note):
    """A solution subclass of a value type, as that type."""
    if not _value_base(base) or type(value) is not base:
        raise NotData("a value of type %s posing as %s" % (type(value).__name__, base))
    if note and _LINK[0] is not None:
        _LINK[0].note("%s rebuilt as %s" % (note, base.__name__))
    return value


def _nt(name, fields, values):
    """A namedtuple of the solution, as a namedtuple the judge makes from its fields."""
    return _LINK[0].namedtuple(name, fields)(*values)


# A dict's views (`d.keys()`) are no class anyone can make: they cross as their items and
# are rebuilt as views of a dict made of them, so they still compare as sets (keys, items).
_DICT_VIEWS = {type({}.keys()): "keys", type({}.values()): "values", type({}.items()): "items",
               type(collections.OrderedDict().keys()): "okeys",
               type(collections.OrderedDict().values()): "ovalues",
               type(collections.OrderedDict().items()): "oitems"}


def _dv(kind, items):
    """A dict view, rebuilt as the same view of a new dict holding its items."""
    items = list(items)
    ordered = collections.OrderedDict if kind in ("okeys", "ovalues", "oitems") else dict
    kind = kind[1:] if kind in ("okeys", "ovalues", "oitems") else kind
    if kind == "keys":
        return ordered.fromkeys(items).keys()
    if kind == "values":
        return ordered(enumerate(items)).values()
    if kind == "items":
        return ordered(items).items()
    raise NotData("a dict view of kind %r" % (kind,))


def _dict_view(obj):
    """(_dv, (kind, items)) for a dict view, None for anything else."""
    kind = _DICT_VIEWS.get(type(obj))
    return None if kind is None else (_dv, (kind, list(obj)))


def _lg(name):
    """A logger (a test's, given to the function, comes back with the arguments): this
    side's own logger of that name, as `logging.getLogger` gives it; held, so a message
    never sets its state."""
    if name is not None and not isinstance(name, str):
        raise NotData("a logger named by a %s" % type(name).__name__)
    return logging.getLogger(name)


def _rx(pattern, flags):
    """A compiled regular expression, compiled again here from its text and flags (re's
    cache may give back one this side held: it is never given state)."""
    if not isinstance(pattern, (str, bytes)) or type(flags) is not int:
        raise NotData("a pattern that is not text")
    import re
    return re.compile(pattern, flags)


class _Gone:
    """The object of a weak reference that is gone (made and dropped at once)."""
    __slots__ = ("__weakref__",)


def _wr(target):
    """A weak reference (nncf's NNCFNetworkInterface holds its model by one), made here by
    `weakref.ref` to the object the same message made or names; one whose object was gone
    (None) is dead here too. Its callback, if it had one, stays where it was."""
    if target is None:
        return weakref.ref(_Gone())
    try:
        return weakref.ref(target)
    except TypeError:
        raise NotData("a weak reference to a %s" % type(target).__name__) from None


def _weak_reference(obj):
    """(_wr, (its object,)) for a plain weak reference (not a subclass: WeakMethod and the
    like stay what they were); None for anything else."""
    return (_wr, (obj(),)) if type(obj) is weakref.ReferenceType else None


def _tl(cls):
    """An object of a library's `threading.local` class (nncf's TracingThreadLocals, in
    its tracing context), made here without running its `__init__`: what the sending
    thread held in it comes as its state, and is this thread's here (another thread gets
    its own, from `__init__`, as `threading.local` does)."""
    if not isinstance(cls, type) or not issubclass(cls, threading.local) or \
            not allowed_class(cls):
        raise NotData("a thread-local object of a class that is not a library's")
    return threading.local.__new__(cls)


def _thread_local(obj):
    """(_tl, (its class,), the calling thread's attributes) for an object of a library's
    threading.local class (which pickle refuses); None for anything else."""
    cls = type(obj)
    if not isinstance(obj, threading.local) or not allowed_class(cls) or \
            _solution_defined(cls) or made_at_run_time(cls):
        return None
    return _tl, (cls,), dict(obj.__dict__)


def _ty(name, args):
    """A subscripted form of the typing module (`Optional[torch.Tensor]` in a forward's
    signature, which nncf keeps), made here by subscripting this side's own form of that
    name with the arguments the same message made."""
    import typing

    form = getattr(typing, name, None) if isinstance(name, str) and \
        not name.startswith("_") else None
    if form is None or isinstance(form, type) or type(form).__module__ != "typing" or \
            (args is not None and type(args) is not tuple):
        raise NotData("a typing form named %r" % (name,))
    if args is None:
        return form   # the form itself (a bare `Tuple`)
    return form[args if len(args) != 1 else args[0]]


def _typing_form(obj):
    """(_ty, (the form's name, its arguments)) for a subscripted form of the typing module
    (pickled as `operator.getitem` of the form, which the receiver does not resolve);
    None for anything else."""
    if type(obj).__module__ != "typing":
        return None
    try:
        reduced = obj.__reduce__()
    except Exception:   # noqa: BLE001 - a form pickle cannot take
        return None
    import operator
    import typing

    if isinstance(reduced, str) and not isinstance(obj, type) and \
            getattr(typing, reduced, None) is obj:
        return _ty, (reduced, None)   # a form by its name (a bare `Tuple`)
    if not (isinstance(reduced, tuple) and len(reduced) == 2 and
            reduced[0] is operator.getitem and len(reduced[1]) == 2):
        return None
    form, args = reduced[1]
    name = getattr(form, "_name", None)
    if not isinstance(name, str) or getattr(typing, name, None) is not form:
        return None
    args = tuple(args) if isinstance(args, tuple) else (args,)
    # (NoneType as None, which typing takes for it: the class pickles as a call of `type`)
    return _ty, (name, tuple(None if a is type(None) else a for a in args))


_SYNC_KINDS = {"lock": threading.Lock, "rlock": threading.RLock,
               "condition": threading.Condition, "event": threading.Event}


def _sy(kind, is_set=False):
    """A synchronization primitive of the threading module (nncf's tracing context holds a
    Condition): a new one of its kind here, unlocked and with no waiter (those are the
    sending process's threads'); an Event as set or not."""
    made = _SYNC_KINDS.get(kind) if isinstance(kind, str) else None
    if made is None:
        raise NotData("a synchronization primitive of kind %r" % (kind,))
    made = made()
    if kind == "event" and is_set is True:
        made.set()
    return made


def _sync_primitive(obj):
    """(_sy, (kind, ...)) for a lock, re-entrant lock, condition or event of the threading
    module (which pickle refuses); None for anything else."""
    cls = type(obj)
    if cls is _LOCK_TYPE:
        return _sy, ("lock",)
    if cls is _RLOCK_TYPE:
        return _sy, ("rlock",)
    if cls is threading.Condition:
        return _sy, ("condition",)
    if cls is threading.Event:
        return _sy, ("event", obj.is_set())
    return None


_LOCK_TYPE, _RLOCK_TYPE = type(threading.Lock()), type(threading.RLock())


def _fi(kind, dtype_name):
    """torch's finfo or iinfo of a dtype, made here from the dtype's name (torch cannot
    pickle them: a correct `return torch.finfo(x.dtype)` was an error)."""
    dtype = getattr(torch, str(dtype_name), None)
    if kind not in ("finfo", "iinfo") or not isinstance(dtype, torch.dtype):
        raise NotData("a %s of an unknown dtype" % (kind,))
    return getattr(torch, kind)(dtype)


def _type_info(obj):
    """(_fi, (kind, dtype)) for torch's finfo or iinfo; None for anything else."""
    if torch is not None and type(obj) in (torch.finfo, torch.iinfo):
        return _fi, (type(obj).__name__, str(obj.dtype))
    return None


def _stdlib_held(obj):
    """(_lg, (name,)) or (_rx, (text, flags)) for a library's logger or a compiled
    pattern; None for anything else."""
    import re
    cls = type(obj)
    if isinstance(obj, logging.Logger) and not _solution_defined(cls):
        return _lg, (None if isinstance(obj, logging.RootLogger) else str(obj.name),)
    if cls is re.Pattern:
        return _rx, (obj.pattern, obj.flags)
    return None


def _m(handle, info):
    """A mirror (an instance of a solution class) coming from the solution process."""
    before = getattr(_LINK[0], "_fence_before", None)
    if before is not None:
        before()   # solution code arrives (see JudgeLink.fence)
    return MirrorState(int(handle), info)


def _mi(handle, class_handle):
    """A mirror going to the solution process (resolved there to the real object)."""
    return _LINK[0].mirror_target(handle, class_handle)


def _s(handle, kind, info):
    """A solution object served by a handle (a function, a class, an iterator)."""
    return _LINK[0].solution_ref(int(handle), kind, info)


def _si(handle):
    """A solution object the judge holds a handle of, going back to the solution."""
    return _LINK[0].own_object(handle)


def _j(handle, dunders=None, posed=None):
    """A judge object the solution holds a handle of (with the protocol dunders the
    judge's object has, and posing as the nearest class of its both processes have:
    `posed_class`)."""
    return _LINK[0].judge_ref(handle, dunders, posed)


def _ji(handle):
    return _LINK[0].own_object(handle)


def _e(module, qualname, args, message, text, original):
    return _LINK[0].exception(module, qualname, args, message, text, original)


def _lf(module, qualname, fingerprint=None, handle=None, info=None):
    """A library's compiled function (a numba dispatcher: pynndescent's distance, held by
    the NNDescent index umap's nearest_neighbors returns) by the name its module holds it
    under: this side's own function of that name, never rebuilt from the message (numba
    pickles one as cloudpickled code); in the judge only when the solution's compiles the
    same Python function (`function_print` of its `py_func`), else a handle of the
    solution's (one compiled from other code and bound to the name in its own process)."""
    if not isinstance(module, str) or not isinstance(qualname, str) or \
            not _module_allowed(module) or _root(module) in JUDGE_MODULES:
        raise NotData("a compiled function of %s.%s" % (module, qualname))
    target = sys.modules.get(module)
    if target is None:
        try:
            target = _import_for_message(module)
        except Exception:
            raise NotData("a compiled function of %s.%s" % (module, qualname)) from None
    for part in qualname.split("."):
        if not part or part.startswith("__"):
            raise NotData("a compiled function of %s.%s" % (module, qualname))
        target = getattr(target, part, None)
    if not _numba_dispatcher(target):
        raise NotData("a compiled function of %s.%s" % (module, qualname))
    link = _LINK[0]
    if isinstance(link, JudgeLink) and (
            type(fingerprint) is not str or
            function_print(_compiled_py_func(target)) != fingerprint):
        if type(handle) is not int:
            raise NotData("a compiled function of %s.%s with no handle" % (module, qualname))
        return link.solution_ref(handle, "function", info)
    return target


# -- torch's operators -------------------------------------------------------------------
# A public operator of torch's functional namespaces (`torch.nn.functional.relu`, what
# deepchem's get_activation('relu') returns and MultilayerPerceptron.__init__ keeps as
# `self.activation_fn`; `torch.tanh`) is the same function on both sides: it crosses from
# the solution process as its namespace and name, and the judge takes its own function of
# that name, never anything the message made. As a handle of the solution process it was
# solution code left in the test's module, and the module's forward ended the run. Only
# these namespaces' public names: tensor arithmetic on what the caller passes, nothing
# that sets process-wide state (seeds, the default dtype, grad mode: other modules of
# torch), which stay handles.
TORCH_OPERATOR_SPACES = (("torch.nn.functional", None), ("torch", "_VariableFunctions"),
                         ("torch._C._nn", "_nn"), ("torch.special", "_special"),
                         ("torch.linalg", "_linalg"), ("torch.fft", "_fft"))


def _operator_space(key):
    if torch is None:
        return None
    for name, attr in TORCH_OPERATOR_SPACES:
        if name == key:
            if attr is None:
                return sys.modules.get(name)
            return getattr(torch._C, attr, None)
    return None


def _is_operator(space_key, space, name, obj):
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_") or \
            space is None or getattr(space, name, None) is not obj:
        return False
    if type(obj) is types.FunctionType:
        # torch.nn.functional's own functions only, not what it imports
        # (handle_torch_function, boolean_dispatch); or a library's wrapper of one of
        # torch's compiled operators of that name that the namespace holds instead (nncf
        # traces models so: its `functools.wraps` of torch._C._nn.gelu, named as that)
        wrapped = getattr(obj, "__wrapped__", None)
        if type(wrapped) is types.BuiltinFunctionType and \
                getattr(wrapped, "__name__", None) == name:
            return any(_is_operator(key, _operator_space(key), name, wrapped)
                       for key, _attr in TORCH_OPERATOR_SPACES)
        return space_key == "torch.nn.functional" and obj.__module__ == space_key
    return type(obj) is types.BuiltinFunctionType


def _torch_operator_name(obj):
    """(namespace, name) of a public operator of torch's functional namespaces, else None."""
    if torch is None or type(obj) not in (types.FunctionType, types.BuiltinFunctionType):
        return None
    name = getattr(obj, "__name__", None)
    for key, _attr in TORCH_OPERATOR_SPACES:
        if _is_operator(key, _operator_space(key), name, obj):
            return key, name
    return None


def _tfn(space_key, name, fingerprint=None, handle=None, info=None):
    """The judge's own operator of that namespace and name (see _torch_operator_name);
    in the judge only when the solution's is the same function (`callable_print`), else
    a handle of the solution's: a wrong function it bound to torch's name in its own
    process (`F.gelu = ` a `functools.wraps` of torch's gelu, `torch.tanh = math.tanh`)
    had the judge run torch's own in its place."""
    space = _operator_space(space_key) if isinstance(space_key, str) else None
    found = getattr(space, name, None) if isinstance(name, str) else None
    if found is None or not _is_operator(space_key, space, name, found):
        raise NotData("an operator %s.%s" % (space_key, name))
    link = _LINK[0]
    if isinstance(link, JudgeLink) and (type(fingerprint) is not str or
                                        callable_print(found) != fingerprint):
        if type(handle) is not int:
            raise NotData("an operator %s.%s with no handle" % (space_key, name))
        return link.solution_ref(handle, "function", info)
    return found


# -- functions of a module both processes have --------------------------------------------
# A plain function a module holds under its own name (a library's or the repository's:
# backpack's `hook_store_io`, which it registers as a forward hook on every layer of the
# test's model Laplace's BackPackInterface extends) went to the solution process by that
# name, and came back as a handle of the solution's function: solution code left in the
# test's layer, and the next forward of the test's model ended the run. It goes back by
# name too, and the judge takes the very function it sent under that name (never a name
# it did not send: that stays a handle of the solution's, as before).


def _module_function_name(obj):
    """(module, qualname) under which its module holds this function, or None (one the
    solution defined, a function no module holds under its name). A closure held so
    counts too: a static method calling super() closes over `__class__` (nlp-architect's
    QuantizedLinear._state_dict_hook, which the judge sent by name as a state-dict hook
    of the test's layer, and whose handle came back into it)."""
    if type(obj) is not types.FunctionType:
        return None
    module, qualname = obj.__module__, obj.__qualname__
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname or \
            _root(module) in JUDGE_MODULES or _solution_defined(obj) or \
            not _own_globals(obj):
        return None
    return (module, qualname) if _held_as(module, qualname, obj) else None


def _own_globals(func):
    """Whether a function's globals are a loaded module's own dict (not one a caller made
    up: `FunctionType(f.__code__, {**globals(), "k": 3}, "f")` runs the same code on
    other values). A decorator's wrapper has its decorator's module's."""
    space = func.__globals__
    name = space.get("__name__")
    module = sys.modules.get(name) if type(name) is str else None
    return module is not None and getattr(module, "__dict__", None) is space


@functools.lru_cache(maxsize=4096)
def _cached_code_print(code):
    return _code_print(code)


def _plain_print(value, depth=0):
    """A value's print both processes make alike: an atom's repr, a tuple's items, a
    function's `function_print`, anything else its type's name (an object's repr may hold
    its address)."""
    if value is None or type(value) in (bool, int, float, complex, str, bytes):
        return repr(value)
    if depth > 3:
        return "..."
    if type(value) is tuple:
        return "(%s)" % ",".join(_plain_print(item, depth + 1) for item in value)
    if type(value) is types.FunctionType:
        return function_print(value, depth + 1)
    if isinstance(value, type):
        return "class %s.%s" % (value.__module__, value.__qualname__)
    cls = type(value)
    return "<%s.%s>" % (cls.__module__, cls.__qualname__)


def function_print(func, depth=0):
    """What makes the solution's function the judge's function of the same name: the same
    code (`_code_print`), over the globals of a module of the same name, with the same
    plain defaults and cells (a decorator's wrapper holds the function it wraps). The
    judge takes its own function for a name only when its print is the one the
    solution's has (`_gf`, `_bm`): a wrong candidate that bound its own function to a
    repository name in its own process (`globals()["_fit_fn"] = wrong`,
    `setattr(Scaler, "apply", wrong)`), where the names its text binds
    (`worker.defined_names`) do not show it, had the judge run the right function in its
    place. None for anything that is no plain function."""
    if type(func) is not types.FunctionType:
        return None
    cells = []
    for cell in func.__closure__ or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:   # empty
            cells.append(Ellipsis)
    kwdefaults = func.__kwdefaults__ or {}
    return "%s:%s:%s:%s:%s" % (
        _cached_code_print(func.__code__), func.__globals__.get("__name__"),
        _plain_print(func.__defaults__, depth),
        _plain_print(tuple(sorted((str(k), v) for k, v in kwdefaults.items())), depth),
        _plain_print(tuple(cells), depth))


def callable_print(obj):
    """`function_print` of a plain function; a compiled function's module and qualname
    (torch's `_VariableFunctionsClass.tanh` is not math's `tanh`)."""
    if type(obj) is types.BuiltinFunctionType:
        return "builtin:%s.%s" % (getattr(obj, "__module__", None),
                                  getattr(obj, "__qualname__", None))
    return function_print(obj)


def _same_function(found, fingerprint):
    return type(fingerprint) is str and function_print(found) == fingerprint


def _gf(module, qualname, handle, info, fingerprint=None):
    """In the judge: the function it sent under that name, else the repository's own
    function of that name (`_repository_function`), when the solution's function is the
    same code (`function_print`), else (a function it never sent, or other code under its
    name) a handle of the solution's."""
    link = _LINK[0]
    found = link.sent_functions.get((module, qualname)) \
        if isinstance(module, str) and isinstance(qualname, str) else None
    if found is not None:
        if _same_function(found, fingerprint):
            return found
        return link.solution_ref(int(handle), "function", info)
    found = _repository_function(module, qualname)
    if found is not None and _same_function(found, fingerprint):
        link.note("a function %s.%s the call left, crossed by name: the judge's own"
                  % (module, qualname))
        return found
    return link.solution_ref(int(handle), "function", info)


_TEST_PARTS = ("test", "tests", "testing", "conftest")


def _repository_function(module, qualname):
    """The judge's own plain function of the repository that a message names by module
    and qualname, or None. nncf's NNCFNetworkInterface keeps
    `wrap_nncf_model_outputs_with_objwalk` (nncf.torch.dynamic_graph.io_handling) as its
    `_wrap_outputs_fn`; create_nncf_network, the target, made it in the solution process,
    and the function came back as a handle left in the test's model ("ran after the call
    returned"). Why it is safe: the judge looks the name up in its own modules and puts
    its own function there, so no code of the solution runs in the judge; what the
    message chooses is only which trusted function of the repository (code the judge runs
    anyway). Only a module of the repository's own package (`REPOSITORY`) that the judge
    has imported and shares with the solution process (never a test module or a conftest,
    nor a module pytest found through its folders), only a `types.FunctionType` found by
    plain lookups (a module's dict, then classes' dicts, a static method unwrapped) whose
    own `__module__` and `__qualname__` are those names (a name the module imported from
    elsewhere, a class, a forged name that does not exist: a handle, as before), never a
    target proxy, and never a name the candidate text defines in the target's module
    (`REPOSITORY["names"]`): the judge's function of that name is the reference's, and a
    wrong helper of the candidate would be replaced by the right one. A name the solution
    rebinds to its own code in its own process gets the repository's function here all
    the same: its code never runs in the judge."""
    root = REPOSITORY["root"]
    if root is None or not isinstance(module, str) or not isinstance(qualname, str):
        return None
    parts, names = module.split("."), qualname.split(".")
    if parts[0] != root or not all(p.isidentifier() for p in parts + names) or \
            any(p in _TEST_PARTS or p.startswith("test_") or p.endswith("_test")
                for p in parts) or any(n.startswith("__") for n in names):
        return None
    if module == REPOSITORY["module"] and (REPOSITORY["names"] is None or
                                           names[0] in REPOSITORY["names"]):
        return None
    found = sys.modules.get(module)
    if not isinstance(found, types.ModuleType) or not _shared_module(found):
        return None
    for index, part in enumerate(names):
        if index and not isinstance(found, type):
            return None
        space = getattr(found, "__dict__", None)
        found = space.get(part) if type(space) in (dict, types.MappingProxyType) else None
        if isinstance(found, staticmethod) and index == len(names) - 1:
            found = found.__func__
    if type(found) is not types.FunctionType or found.__module__ != module or \
            found.__qualname__ != qualname or _is_solution_code(found) or \
            "__curator_remote__" in found.__dict__ or \
            "__curator_target__" in found.__dict__:
        return None
    return found


# -- closures of a module both processes have -----------------------------------------
# A function nested in a function of the repository or an allowed library (Laplace's
# FeatureExtractor registers `hook`, a closure over itself, as a forward hook of the
# model's last layer) crosses as its name and its cells: the receiving side makes it from
# its own module's code object (the same bytes, else it stays a handle), the cells are
# data like any instance's state. So the hook fills the copy of the feature dict that the
# side running the forward pass holds, not the other side's. A closure the judge makes
# this way runs the judge's own code; one the solution process makes from the judge's
# goes back as the judge's own function.


def _code_print(code):
    """What makes two code objects the same function body on the two sides (both fork
    from one worker: one hash seed, one interpreter)."""
    parts = [code.co_code, repr(code.co_names), repr(code.co_varnames),
             repr(code.co_freevars), repr(code.co_cellvars)]
    parts += [_code_print(c) if isinstance(c, types.CodeType) else repr(c).encode()
              for c in code.co_consts]
    return hashlib.sha256(b"\0".join(p if isinstance(p, bytes) else p.encode()
                                      for p in parts)).hexdigest()


def _nested_code(module, qualname, line):
    """This side's code object of the function `qualname` (nested: it has `<locals>`)
    defined at `line` of `module`, found from the function that encloses it; None."""
    if not isinstance(module, str) or not isinstance(qualname, str) or \
            type(line) is not int or "<locals>" not in qualname or \
            not _module_allowed(module) or _root(module) in JUDGE_MODULES or \
            _root(module) in BASE_ROOTS:
        return None
    target = sys.modules.get(module)
    outer, _, _ = qualname.partition(".<locals>")
    for part in outer.split("."):
        if not part or part.startswith("__"):
            return None
        target = inspect.getattr_static(target, part, None)
        if isinstance(target, (staticmethod, classmethod)):
            target = target.__func__
    if type(target) is not types.FunctionType:
        return None
    name = qualname.rpartition(".")[2]
    stack = [target.__code__]
    while stack:
        code = stack.pop()
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                if const.co_name == name and const.co_firstlineno == line:
                    return const
                stack.append(const)
    return None


def closure_name(func):
    """(module, qualname, line, print) of a closure made from the code of a module both
    processes have (the code object its module holds: not one the solution made or
    changed), with no attributes of its own; None otherwise."""
    if type(func) is not types.FunctionType or func.__closure__ is None:
        return None
    module, qualname = func.__module__, func.__qualname__
    if not isinstance(module, str) or module not in sys.modules or \
            not _shared_module(sys.modules[module]) or func.__dict__:
        return None
    code = func.__code__
    if _nested_code(module, qualname, code.co_firstlineno) is not code:
        return None
    return module, qualname, code.co_firstlineno, _code_print(code)


def closure_state(func):
    cells = []
    for cell in func.__closure__:
        try:
            cells.append((True, cell.cell_contents))
        except ValueError:   # not bound yet
            cells.append((False, None))
    return tuple(cells), func.__defaults__, func.__kwdefaults__


def make_closure(module, qualname, line, fingerprint):
    """This side's function of that name, with empty cells (`_fill_closure` fills them);
    None when this side has no such code, or other code under that name."""
    code = _nested_code(module, qualname, line)
    if code is None or _code_print(code) != fingerprint:
        return None
    cells = tuple(types.CellType() for _ in code.co_freevars)
    func = types.FunctionType(code, sys.modules[module].__dict__, code.co_name, None, cells)
    func.__qualname__ = qualname
    return func


_FRESH_CLOSURES = {}   # id -> a closure this message made and has not filled yet


def _jc(handle, dunders, module, qualname, line, fingerprint):
    """In the solution process: a closure of the judge's, made from this process's own
    code (or the judge's handle when this process has other code under its name)."""
    func = make_closure(module, qualname, line, fingerprint)
    if func is None:
        return _LINK[0].judge_ref(handle, dunders)
    _LINK[0].judge_closure(func, handle)
    _FRESH_CLOSURES[id(func)] = func
    return func


def _sc(handle, info, module, qualname, line, fingerprint):
    """In the judge: a closure of the solution process's, made from the judge's own code
    of that name (or a handle of the solution's function when the judge has other code)."""
    func = make_closure(module, qualname, line, fingerprint)
    if func is None:
        return _LINK[0].solution_ref(int(handle), "function", info)
    _LINK[0].made_closures[id(func)] = func
    _FRESH_CLOSURES[id(func)] = func
    return func


def _fill_closure(func, state):
    """The cells, defaults and keyword defaults of a closure this message made (never of
    any other function). One whose name fell back to a handle has none to fill."""
    if type(func) is not types.FunctionType:
        return None
    if _FRESH_CLOSURES.get(id(func)) is not func:
        raise NotData("a message that changes a function it did not make")
    del _FRESH_CLOSURES[id(func)]
    if not isinstance(state, tuple) or len(state) != 3:
        raise NotData("a closure of the wrong shape")
    cells, defaults, kwdefaults = state
    if not isinstance(cells, tuple) or len(cells) != len(func.__closure__) or \
            not (defaults is None or type(defaults) is tuple) or \
            not (kwdefaults is None or type(kwdefaults) is dict):
        raise NotData("a closure of the wrong shape")
    for cell, item in zip(func.__closure__, cells):
        if not isinstance(item, tuple) or len(item) != 2:
            raise NotData("a closure of the wrong shape")
        if item[0]:
            cell.cell_contents = item[1]
    func.__defaults__ = defaults
    func.__kwdefaults__ = kwdefaults
    return None


def _judge_leaf(value):
    """A judge tensor a read or an iteration gives that autograd across may name in the
    open call: a leaf that requires grad (a parameter of a handle module, which backpack's
    R_op, under Laplace's fit, differentiates the module's output with respect to). A
    non-leaf (a DataLoader's batch sliced from an X that requires grad) stays data."""
    if torch is None or not isinstance(value, torch.Tensor):
        return False
    base = torch._C.TensorBase
    try:
        return bool(base.requires_grad.__get__(value)) and bool(base.is_leaf.__get__(value))
    except Exception:   # noqa: BLE001 - not a plain tensor: data, as before
        return False


def _holds_judge_leaf(value):
    """A judge leaf (`_judge_leaf`), or a tuple, list or dict of a few values holding
    one: what a module's `named_parameters()` gives, (name, parameter), and its
    `_parameters`, which `named_parameters` of a module holding the test's reads."""
    if _judge_leaf(value):
        return True
    if type(value) in (dict, collections.OrderedDict):
        value = list(value.values())
    return type(value) in (tuple, list) and len(value) <= 16 and \
        any(_judge_leaf(item) for item in value)


def _hook_handle(obj):
    """torch's RemovableHandle whose dicts are gone (a copy of a module's hook dict that
    nothing else held) pickles their dead references as None, which its __setstate__
    cannot make a weak reference to: the same handle with empty dicts in their place,
    whose references die as soon as the message is decoded. None for anything else."""
    hooks = sys.modules.get("torch.utils.hooks")
    if hooks is None or type(obj) is not getattr(hooks, "RemovableHandle", None):
        return None
    state = obj.__getstate__()
    if not isinstance(state, tuple) or len(state) < 2:
        return None
    fixed = list(state)
    if fixed[0] is None:
        fixed[0] = collections.OrderedDict()
    if len(fixed) > 2 and isinstance(fixed[2], tuple):
        fixed[2] = tuple(collections.OrderedDict() if d is None else d for d in fixed[2])
    return copyreg.__newobj__, (type(obj),), tuple(fixed)


def _library_method(obj):
    """(object, name) of a method of a library module bound to that module, when its
    class defines it in the library's own code: a lazy module's forward pre-hook
    `self._infer_parameters` (nn.LazyLinear), which must run on the copy it is part of.
    As a handle it ran on the other process's object, and a LazyLinear the solution
    returned never learned its shape. None for anything else."""
    if torch is None or type(obj) is not types.MethodType or \
            not isinstance(obj.__self__, torch.nn.Module):
        return None
    owner, func = obj.__self__, obj.__func__
    name = getattr(func, "__name__", None)
    if not _private_name(name) or not _library_function_of(_TYPE(owner), name, func):
        return None
    return owner, name


def _private_name(name):
    """Its class's own machinery, `_infer_parameters`: never a public method or dunder
    (what a test calls in the open stays a handle)."""
    return type(name) is str and name.startswith("_") and not name.startswith("__")


def _library_function_of(cls, name, func=None):
    """Whether `cls`, a library class (never the solution's), defines `name` as a plain
    function of an allowed library's own code (and it is `func`, when given)."""
    if not allowed_class(cls) or _solution_defined(cls) or \
            cls.__dict__.get("__curator_class__") is not None:
        return False
    defined = inspect.getattr_static(cls, name, None)
    return type(defined) is types.FunctionType and (func is None or defined is func) and \
        _module_allowed(getattr(defined, "__module__", None) or "") and _own_globals(defined)


def _library_object_method(obj):
    """(object, name) of a method bound to an instance of a library class (not an
    nn.Module: those are `_library_method`'s), when the class's own attribute of that name
    (`inspect.getattr_static`) is that very function, of an allowed library's code; None
    for anything else. nncf's NNCFNetworkInterface keeps
    `self.__input_info_based_input_wrapper.wrap_inputs`, a method of its
    InputInfoWrapManager, as its `_wrap_inputs_fn`: made by the target in the solution
    process, it came back as a handle left in the test's model."""
    if type(obj) is not types.MethodType or \
            (torch is not None and isinstance(obj.__self__, torch.nn.Module)):
        return None
    owner, func = obj.__self__, obj.__func__
    name = getattr(func, "__name__", None)
    cls = _TYPE(owner)
    if type(name) is not str or not name.isidentifier() or _held_owner(owner) or \
            made_at_run_time(cls) or not _library_function_of(cls, name, func):
        return None
    return owner, name


def _held_owner(owner):
    """An object a message names that the judge holds as it is (a class, a module, an
    enum's member, a logger, a compiled pattern): never the owner of a bound method the
    judge makes for a message."""
    import re
    return isinstance(owner, (type, types.ModuleType, enum.Enum, logging.Logger,
                              re.Pattern)) or owner is None


def _bm(owner, name, fingerprint=None, handle=None, info=None):
    """A library module's own private method bound to it (see _library_method), or a
    method of an instance of a library class (`_library_object_method`) bound to it: made
    only for an object this message made, never one the judge holds (a handle of the
    judge's, `judge_ids`, or `_held_owner`), and always the judge's own class's function
    of that name, never one the message gives. Why that is safe: the function is the
    library's code as the judge's class holds it, which the judge runs on data anyway;
    the solution chooses only the name, and in the judge only for the same code: the
    solution's function of that name has the print of the judge's (`function_print`;
    a method the solution set on the class in its own process, other code, is a handle
    of the solution's, as a method of its own forged onto the object).
    Adopting the reply never binds it to a judge object the owner pairs with (`_adopt`)."""
    link = _LINK[0]
    cls = _TYPE(owner)
    module = torch is not None and isinstance(owner, torch.nn.Module)
    if (not _private_name(name) if module else
            (type(name) is not str or not name.isidentifier() or _held_owner(owner) or
             made_at_run_time(cls))) or \
            not _library_function_of(cls, name) or (
                getattr(link, "judge_ids", {}).get(id(owner)) is not None):
        raise NotData("a bound method %r" % (name,))
    found = inspect.getattr_static(cls, name)
    if isinstance(link, JudgeLink) and not _same_function(found, fingerprint):
        if type(handle) is not int:
            raise NotData("a bound method %r with no handle" % (name,))
        return link.solution_ref(handle, "function", info)
    return types.MethodType(found, owner)


def _parametrized(obj):
    """(class, state, {name: (parametrizations, original)}) of a library module torch's
    parametrize made its own class for (`nn.utils.parametrizations.weight_norm`,
    `orthogonal`): that class exists only in the process that made it, and its pickling
    raises, so a correct function returning one was an error. None for anything else and
    for a parametrization of the solution's own class."""
    parametrize = sys.modules.get("torch.nn.utils.parametrize")
    if parametrize is None or not isinstance(obj, torch.nn.Module) or \
            not parametrize.is_parametrized(obj):
        return None
    base = _TYPE(obj).__bases__[0]
    if len(_TYPE(obj).__bases__) != 1 or not allowed_class(base) or _solution_defined(base):
        return None
    state = dict(obj.__dict__)
    modules = dict(state["_modules"])
    tensors = {}
    for name, plist in modules.pop("parametrizations").items():
        if any(_solution_defined(_TYPE(m)) or not allowed_class(_TYPE(m)) for m in plist):
            return None   # (a parametrization of the solution's own is a mirror, made
            #              only after the message is decoded)
        originals = (plist.original,) if plist.is_tensor else \
            tuple(getattr(plist, "original%d" % i) for i in range(plist.ntensors))
        tensors[name] = (list(plist), originals)
    state["_modules"] = modules
    return base, state, tensors


def _pm(cls, state, tensors):
    """A parametrized library module (see _parametrized), made again here: the module of
    its class, its parametrizations registered again in order, their original tensors
    the ones the message carries (registering runs each one's right inverse)."""
    parametrize = __import__("torch.nn.utils.parametrize", fromlist=["_"])
    if not (isinstance(cls, type) and issubclass(cls, torch.nn.Module) and allowed_class(cls)
            and not _solution_defined(cls)) or type(state) is not dict or \
            type(tensors) is not dict:
        raise NotData("a parametrized module that is not data")
    module = cls.__new__(cls)
    module.__setstate__(state)
    for name, (modules, originals) in tensors.items():
        if type(name) is not str or type(modules) is not list or not modules or \
                type(originals) is not tuple or not originals or \
                not all(isinstance(t, torch.nn.Parameter) for t in originals) or \
                not all(isinstance(m, torch.nn.Module) for m in modules):
            raise NotData("a parametrized module that is not data")
        with torch.no_grad():   # the tensor they make, in the original's place first
            value = modules[0](*originals)
            for parametrization in modules[1:]:
                value = parametrization(value)
        module.register_parameter(name, torch.nn.Parameter(value.detach().clone()))
        for parametrization in modules:
            parametrize.register_parametrization(module, name, parametrization, unsafe=True)
        held = module.parametrizations[name]
        if len(originals) == 1 and held.is_tensor:
            held.original = originals[0]
        elif not held.is_tensor and held.ntensors == len(originals):
            for index, original in enumerate(originals):
                setattr(held, "original%d" % index, original)
        else:
            raise NotData("a parametrized module that is not data")
    return module


def _numba_dispatcher(obj):
    """Whether `obj` is a library's compiled function: a numba dispatcher, or a function
    jax compiled (`jax.jit`: jnp.polyval, which pennylane's pulse Hamiltonians hold as
    coefficient functions; as a handle of the solution process, the judge's jax traced
    through it and sent its tracers, which do not pickle)."""
    dispatcher = sys.modules.get("numba.core.dispatcher")
    if dispatcher is not None and isinstance(obj, dispatcher.Dispatcher):
        return True
    xla = sys.modules.get("jaxlib.xla_extension")
    jitted = getattr(xla, "PjitFunction", None) if xla is not None else None
    return isinstance(jitted, type) and isinstance(obj, jitted)


def _compiled_py_func(obj):
    """The Python function a compiled function compiles (numba's `py_func`, the function
    `jax.jit` wraps)."""
    func = getattr(obj, "py_func", None)
    return func if func is not None else getattr(obj, "__wrapped__", None)


def _library_function_name(obj):
    """(module, qualname) under which a library's module holds this compiled function
    itself, so the other side's function of that name is the same; None for one the
    solution defined (the candidate's own, a closure compiled at run time)."""
    func = _compiled_py_func(obj)
    module = getattr(func, "__module__", None)
    qualname = getattr(func, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname \
            or not _module_allowed(module) or _solution_defined(func):
        return None
    return (module, qualname) if _held_as(module, qualname, obj) else None


def _held_as(module, qualname, obj):
    """Whether the loaded module `module` holds `obj` itself under `qualname`."""
    target = sys.modules.get(module)
    for part in qualname.split("."):
        target = getattr(target, part, None)
    return target is obj


# -- enum members ----------------------------------------------------------------------------
# An enum's member is one object its class holds, not a value: torchvision's WeightsEnum
# pickles as `ResNet50_Weights(value)`, a lookup by value, and a value the test patched
# (`monkeypatch.setattr(weights.value, 'url', tmp)`) or one holding modules (equal only to
# themselves) is no member on the other side. A member of a class both sides have crosses
# as its class and name: the judge gets its own member back and takes no state with it;
# the solution process gets its own member with the plain data attributes the judge's
# member and its value hold now (what the test patched on them), set there.
_ENUM_OWN = frozenset({"_name_", "_value_", "_sort_order_", "__objclass__"})


def _plain(value, depth=0):
    """Data with no object of its own: atoms, and lists, tuples and dicts of them."""
    if value is None or type(value) in (bool, int, float, str, bytes):
        return True
    if depth > 4:
        return False
    if type(value) in (list, tuple):
        return all(_plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(_plain(k, depth + 1) and _plain(v, depth + 1) for k, v in value.items())
    return False


def _enum_member(obj):
    """(class, name) of an enum member its class holds under that name; None for
    anything else (a Flag's combination has no name of its own)."""
    if not isinstance(obj, enum.Enum):
        return None
    cls = type(obj)
    name = (_namespace(obj) or {}).get("_name_")
    members = cls.__dict__.get("_member_map_")
    if type(name) is not str or not isinstance(members, dict) or members.get(name) is not obj:
        return None
    return cls, name


def _enum_state(member):
    """The plain data attributes of a member and of its value, as the judge holds them."""
    namespace = _namespace(member) or {}
    own = {k: v for k, v in namespace.items()
           if type(k) is str and k not in _ENUM_OWN and _plain(v)}
    value = namespace.get("_value_")
    namespace = None if _plain(value) else _namespace(value)
    held = {k: v for k, v in namespace.items() if type(k) is str and _plain(v)} \
        if namespace is not None else {}
    return own, held


def _differs(old, plain):
    """Whether `old` is not the plain value `plain` (compared only as the same type: an
    attribute holding a tensor is never asked `!=`)."""
    return type(old) is not type(plain) or old != plain


def _set_enum_state(member, state):
    """In the solution process: the judge's plain attributes on this process's member."""
    own, held = state
    mine = _namespace(member)
    if mine is None:
        return
    for key, value in own.items():
        if type(key) is str and key not in _ENUM_OWN and _differs(mine.get(key), value):
            mine[key] = value
    value = mine.get("_value_")
    namespace = None if _plain(value) else _namespace(value)
    if namespace is not None:
        for key, value in held.items():
            if _differs(namespace.get(key), value):
                namespace[key] = value


def _en(cls, name):
    """An enum member by its class and name: this side's own member of that name."""
    members = cls.__dict__.get("_member_map_") if isinstance(cls, enum.EnumMeta) else None
    member = members.get(name) if isinstance(members, dict) and type(name) is str else None
    if not isinstance(member, cls):
        raise NotData("an enum member that is not one")
    return member


def _ens(cls, name, state):
    """In the solution process: the judge's member with its plain attributes as the judge
    holds them (`_enum_state`). Not a rebuild function of the judge's (not in REBUILDERS):
    no message gives state to a member the judge holds."""
    member = _en(cls, name)
    _set_enum_state(member, state)
    return member


def _tfg(gid, delta):
    """A TensorFlow 1 graph: the judge's own, or the solution process's mirror of it, with
    the nodes and collection items the sender added since it last sent it
    (`curator.execution.tf_graphs`)."""
    return _LINK[0].tf_graph(gid, delta)


def _tfe(graph, kind, name, variable_def=None):
    """A tensor ('t'), operation ('o') or Variable ('v') of a graph `_tfg` gave, by name:
    the receiver's own element of that name."""
    return _LINK[0].tf_element(graph, kind, name, variable_def)


def _tf_reduce(link, obj):
    """A TensorFlow 1 graph or one of its elements, for the other side: by reference (see
    tf_graphs); None for anything else."""
    if not tf_graphs.tf_loaded():
        return None
    kind = tf_graphs.element_kind(obj)
    if kind is None:
        return None
    sync = link.tf_sync
    _allow_tensorflow()
    if kind == "g":
        gid = sync.gid_of(obj, make=isinstance(link, JudgeLink))
        if gid is None:
            raise CannotCross("a TensorFlow graph the solution made (only the judge's "
                              "graphs and what is added to them cross)")
        return _tfg, (gid, sync.delta(gid))
    graph = obj.graph
    if kind == "v":
        gid = sync.gid_of(graph, make=isinstance(link, JudgeLink))
        if gid is None:
            raise CannotCross("a TensorFlow variable of a graph the solution made")
        return _tfe, (graph, kind, obj.name, sync.variable_def(gid, obj))
    return _tfe, (graph, kind, obj.name)


def _tf_allowed(graph_def, graph):
    """Refuses nodes the solution added that could run code or reach files, processes or
    the network once the judge's session runs them (tf_graphs.ALLOWED_OP_MODULES)."""
    refused = tf_graphs.refused_nodes(graph_def, graph)
    if refused:
        raise NotData("TensorFlow graph nodes whose ops reach outside the session (%s)"
                      % ", ".join(refused[:5]))


def _allow_tensorflow():
    """A run whose judge hands the solution a TensorFlow graph rebuilds TensorFlow's
    values too, on both sides (a ConfigProto, a DType the method keeps on `self`), as a
    run whose tests import TensorFlow does: recommenders' environment gets TensorFlow as
    an extra its worker does not preload, and RBM keeps its session's ConfigProto."""
    ALLOWED_ROOTS.add("tensorflow")


def _tf_element(obj):
    """A TensorFlow 1 graph or one of its elements: the receiver's own, never walked."""
    return type(obj).__module__.startswith("tensorflow.") and tf_graphs.tf_loaded() and \
        tf_graphs.element_kind(obj) is not None


def _mod(name):
    """A module, as the side that reads the message already has it (never imported)."""
    module = sys.modules.get(str(name))
    if module is None or str(name).split(".")[0] in JUDGE_MODULES or \
            getattr(module, "__curator_judge_only__", False):
        # nor a test module or conftest (`judge_only`): held by the judge, a read of it
        # through a handle would be a handle to the tests' own module
        raise CannotCross("a module (%s)" % name)
    return module


# Modules never handed to a test as a value from the solution process.
JUDGE_MODULES = {"curator", "_curator_harness", "pytest", "_pytest", "pluggy", "builtins",
                 "sys", "os", "gc", "importlib"}


REBUILDERS = {name: globals()[name] for name in
              ("_t", "_tref", "_tv", "_a", "_aref", "_ja", "_ao", "_v", "_nt", "_dv", "_lg", "_rx", "_wr", "_tl", "_sy", "_ty", "_fi", "_m", "_mi", "_s", "_si", "_j", "_ji", "_e",
               "_mod", "_lf", "_tfn", "_gf", "_sc", "_fill_closure", "_en", "_bm", "_pm",
               "_tfg", "_tfe")}



def _refuse_state(*args):
    raise NotData("a message that changes a rebuild function of the judge")


# A BUILD opcode applied to a rebuild function itself (its __defaults__, its __dict__) asks
# its __setstate__ first: refused. (What else find_class returns that state could change
# sends the message to the checked decoder, see _changeable.)
for _rebuilder in REBUILDERS.values():
    _rebuilder.__setstate__ = _refuse_state


# The functions a message names make its values while it is decoded, and at no other time.
# A message can also leave one where the judge calls it later: a forward hook on the test's
# own model that is `functools.partial(_t, <a tensor's bytes>)` answered the test's
# `expected = model(x)` with a constant of the solution's choice, and no solution code ran
# for the fence to see (a wrong tiled inference passed). What `_resolve` gives for a rebuild
# function, this module's or a library's reconstructor, is that function behind a check:
# called with no message being decoded in this process, it ends the run as tampering.
_DECODING = [0]   # messages being decoded here (judge_loads, a reply's call id)
_DECODE_ONLY = {}   # the function -> its checked stand-in
_CHECKED_REBUILDERS = set()   # the stand-ins


def _decode_only(func):
    checked = _DECODE_ONLY.get(func)
    if checked is not None:
        return checked

    def rebuild(*args, **kwargs):
        if not _DECODING[0]:
            what = "a rebuild function (%s) that the judge called after its message" % (
                getattr(func, "__name__", "?"),)
            link = _LINK[0]
            if isinstance(link, JudgeLink):
                raise link.violation(what)
            raise NotData(what)
        return func(*args, **kwargs)

    functools.update_wrapper(rebuild, func)
    rebuild.__setstate__ = _refuse_state   # BUILD on it is refused, as on this module's
    _DECODE_ONLY[func] = rebuild
    _CHECKED_REBUILDERS.add(rebuild)
    return rebuild

# Reconstructors of allowed classes that the judge resolves by name (see _resolve).
NUMPY_REBUILDERS = {("numpy.core.multiarray", "_reconstruct"),
                    ("numpy._core.multiarray", "_reconstruct"),
                    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
                    # a random Generator or RandomState and its bit generator (held by
                    # pennylane's devices, scikit-learn's estimators): numpy's plain
                    # functions that make one of its own bit generator classes, by name
                    # or as a class this unpickler resolved, whose state is then set;
                    # numpy 2 adds the bit generator's SeedSequence (Cython: the class's
                    # __new__ and its fields)
                    *(("numpy.random._pickle", name) for name in (
                        "__generator_ctor", "__randomstate_ctor", "__bit_generator_ctor")),
                    ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
                    # a masked array: its data and mask made from its classes, shape and
                    # dtype, then its state set (a correct function returning one was
                    # "a value of type _mareconstruct ... cannot cross")
                    ("numpy.ma.core", "_mareconstruct")}
LIBRARY_REBUILDERS = {("copyreg", "_reconstructor"), ("copyreg", "__newobj__"),
                      *NUMPY_REBUILDERS}
# pandas' own reconstructors (Cython functions and two index builders: each rebuilds a
# block, an array, an index or a timestamp from data and an allowed class), resolved
# only when pandas is an allowed library of the run (a repository whose environment
# preloads it): without them no DataFrame crossed ("a value of type
# _cython_3_0_11.cython_function_or_method cannot cross", cleanlab's CleanLearning.fit).
PANDAS_REBUILDERS = {("pandas._libs.internals", "_unpickle_block"),
                     ("pandas._libs.arrays", "__pyx_unpickle_NDArrayBacked"),
                     ("pandas._libs.tslibs.nattype", "__nat_unpickle"),
                     ("pandas._libs.tslibs.timedeltas", "_timedelta_unpickle"),
                     ("pandas._libs.tslibs.timestamps", "_unpickle_timestamp"),
                     ("pandas.core.indexes.base", "_new_Index"),
                     ("pandas.core.indexes.datetimes", "_new_DatetimeIndex")}
# scikit-learn's `newObj(cls)` (cls.__new__(cls), then the class's own __setstate__):
# its trees and distance metrics, so a fitted NearestNeighbors crosses (cleanlab's
# create_knn_graph_and_index returns one).
SKLEARN_REBUILDERS = {("sklearn.neighbors._kd_tree", "newObj"),
                      ("sklearn.neighbors._ball_tree", "newObj"),
                      ("sklearn.metrics._dist_metrics", "newObj")}
# TensorFlow's eager tensors reduce to convert_to_tensor(ndarray) (GPflow's functions
# return them).
TENSORFLOW_REBUILDERS = {("tensorflow.python.framework.ops", "convert_to_tensor"),
                         # a DType by its name (a variable's dtype, GPflow's kernels)
                         ("tensorflow.python.framework.dtypes", "as_dtype")}
LIBRARY_REBUILDERS |= PANDAS_REBUILDERS | SKLEARN_REBUILDERS | TENSORFLOW_REBUILDERS
NAMED_REBUILDERS = PANDAS_REBUILDERS | SKLEARN_REBUILDERS | TENSORFLOW_REBUILDERS
CYTHON_FUNCTIONS = {"cython_function_or_method", "fused_cython_function"}


MAX_LENT_INDEX = 1 << 24   # a place in a call's request (an autograd answer's lent leaf)


class MirrorState:
    """What the solution process says an instance of one of its classes holds now."""

    def __init__(self, handle, info):
        self.handle = handle
        self.info = info
        self.state = {}

    def __setstate__(self, state):
        self.state = state if isinstance(state, dict) else {}


# -- decoding in the judge ----------------------------------------------------------------


def _import_for_message(name):
    """A library module a message names and the judge has not imported, imported with the
    judge's process state kept as it was: what a module does at import to the process
    (numpy's linalg tests seed numpy's global generator, modules add warning filters)
    is never a message's to do to the judge (one naming a class of numpy's test_linalg
    reseeded the judge's numpy, and the test drew what that import chose)."""
    import importlib

    saved = _process_state()
    try:
        return importlib.import_module(name)
    finally:
        _restore_process_state(saved)


def _process_state():
    """What of the judge's process a module's import may change and a run depends on: the
    global random generators, warning filters, numpy's error handling, torch's default
    dtype, deterministic flag and grad mode, the working folder and the environment."""
    state = {"rng": rng_state(), "warnings": list(warnings.filters), "cwd": os.getcwd(),
             "env": dict(os.environ)}
    if np is not None:
        state["seterr"] = np.geterr()
    if torch is not None:
        state["torch"] = (torch.get_default_dtype(),
                          torch.are_deterministic_algorithms_enabled(),
                          torch.is_grad_enabled())
    return state


def _restore_process_state(state):
    set_rng_state(state["rng"])
    if warnings.filters != state["warnings"]:
        warnings.filters[:] = state["warnings"]
        mutated = getattr(warnings, "_filters_mutated", None)   # (its cache, where it has one)
        if mutated is not None:
            mutated()
    if os.getcwd() != state["cwd"]:
        os.chdir(state["cwd"])
    if dict(os.environ) != state["env"]:
        os.environ.clear()
        os.environ.update(state["env"])
    if np is not None and np.geterr() != state["seterr"]:
        np.seterr(**state["seterr"])
    if torch is not None:
        dtype, deterministic, grad = state["torch"]
        if torch.get_default_dtype() != dtype:
            torch.set_default_dtype(dtype)
        if torch.are_deterministic_algorithms_enabled() != deterministic:
            torch.use_deterministic_algorithms(deterministic)
        if torch.is_grad_enabled() != grad:
            torch.set_grad_enabled(grad)


def _resolve(module, name):
    if module == __name__ and name in REBUILDERS:
        return _decode_only(REBUILDERS[name])
    if module == "functools" and name == "partial":
        # a library value that pickles as partial(ItsClass, **fields) (TensorFlow's
        # variables): nothing a plain REDUCE of an allowed class could not call already
        return functools.partial
    if module in ("copyreg",) and name in ("_reconstructor", "__newobj__"):
        import copyreg
        return _decode_only(getattr(copyreg, name))
    if module == "builtins":
        if name not in BUILTIN_CLASSES and not (
                isinstance(getattr(builtins, name, None), type)
                and issubclass(getattr(builtins, name), BaseException)):
            raise NotData("builtins.%s" % name)
        return getattr(builtins, name)
    if np is not None and (module, name) in NUMPY_REBUILDERS:
        return _decode_only(getattr(sys.modules.get(module) or
                                    __import__(module, fromlist=["_"]), name))
    if (module, name) in STDLIB_VALUE_CLASSES:
        import importlib
        return getattr(importlib.import_module(module), name)
    if not isinstance(module, str) or not _module_allowed(module):
        raise NotData("%s.%s" % (module, name))
    target = sys.modules.get(module)
    if target is None:
        # a library module the judge has not imported yet: imported, as its class's own
        # pickle would, but never a program's entry (`torch.utils.model_dump.__main__`
        # exits when imported: SystemExit in the judge), and whatever its import raises
        # is the message's fault
        if any(part.startswith("__") for part in module.split(".")):
            raise NotData("%s.%s" % (module, name))
        try:
            target = _import_for_message(module)
        except BaseException:   # noqa: BLE001 - SystemExit from a module's import too
            raise NotData("%s.%s" % (module, name)) from None
    if (module, name) in NAMED_REBUILDERS:   # functions: by name, of an allowed library
        found = getattr(target, name, None)
        if found is None:
            raise NotData("%s.%s" % (module, name))
        return _decode_only(found)
    obj = target
    for part in str(name).split("."):
        if part.startswith("__") or not part:
            raise NotData("%s.%s" % (module, name))
        obj = getattr(obj, part, None)
        if obj is None:
            raise NotData("%s.%s" % (module, name))
        if not isinstance(obj, type) and part != str(name).split(".")[-1]:
            raise NotData("%s.%s" % (module, name))
    if torch is not None and isinstance(obj, (torch.dtype, torch.layout,
                                              torch.memory_format, torch.qscheme)):
        return obj
    if np is not None and isinstance(obj, np.ufunc):
        return obj   # numpy's ufuncs (np.sqrt held by a returned object): pure arithmetic
    if isinstance(obj, type) and allowed_class(obj) and obj.__module__ == module and \
            obj.__qualname__ == name:
        return obj
    if _library_singleton(obj, name):
        _SINGLETONS[id(obj)] = obj
        return obj
    raise NotData("%s.%s" % (module, name))


# The library objects `_resolve` gave by name (`_library_singleton`), kept alive: id -> it.
_SINGLETONS = {}


def _library_singleton(obj, name):
    """Whether `obj`, which an allowed library's module holds under `name`, is an object
    that library pickles by that very name (its reduction is the name: pickle's way for
    an object held once, such as jax's pytree registries, which every PyTreeDef's state
    names). The judge's own object of that name is the value: a PyTreeDef in a reply
    was `tampered` ("the solution process sent jax._src.tree_util.dispatch_registry"),
    as the judge resolved classes, dtypes and ufuncs only. Never a class, a module or
    anything callable (their rules are above), nor an object of a class the judge does
    not rebuild. The decoder takes such an object for one the judge holds
    (`_changeable`): no state opcode of the message applies to it."""
    cls = type(obj)
    if isinstance(obj, (type, types.ModuleType)) or callable(obj) or \
            not allowed_class(cls) or denied_class(cls):
        return False
    try:
        reduce = copyreg.dispatch_table.get(cls)
        reduced = reduce(obj) if reduce is not None else obj.__reduce_ex__(PROTOCOL)
    except Exception:   # noqa: BLE001 - a library object that does not pickle
        return False
    return type(reduced) is str and reduced == name


# A message makes values; it never changes an object the judge already holds. Pickle's
# state and item opcodes (BUILD, SETITEM(S), APPEND(S), ADDITEMS) apply to whatever object
# is on the stack, so on a module `_mod` returned, a judge object `_j` named or a class
# `find_class` resolved they would rebind the judge's `torch.equal`, set a test object's
# method past `_check_writable`, or a library class's `__eq__`. The C unpickler cannot be
# told which object an opcode applies to. A message that names a held handle
# (HELD_REBUILDERS) or a Python function one could change is decoded again by
# `_CheckedUnpickler`, which applies those opcodes only to objects the message made (and
# to the call's own arguments, `_tref`/`_aref`, which the solution may change as it could
# in-process). Classes stay on the C path (a module or an optimizer comes back from most
# calls that take one): the classes a message names are compared after decoding with
# what they held before, and one it changed is put back and the message refused.
HELD_REBUILDERS = frozenset({"_tv", "_mod", "_lf", "_tfn", "_gf", "_j", "_ji", "_si", "_s", "_lg", "_rx", "_en", "_ty", "_sy",
                             "_tfg", "_tfe"})
_HEAPTYPE, _IMMUTABLETYPE = 1 << 9, 1 << 8


class _Recheck(Exception):
    """The fast decoder met a name the checked one must decode."""


def _changeable(found):
    """Whether an object `find_class` returned, that the judge held before the message, is
    one a state opcode could change and a snapshot would not cover: a held handle's
    rebuild function, or a Python function (its defaults, its __dict__), or an enum class
    (calling one gives a member it holds, whose state BUILD would set), or any other
    object that is no class and has a __dict__ (a ufunc)."""
    if isinstance(found, enum.EnumMeta):
        return True
    if isinstance(found, types.FunctionType):
        if found in _CHECKED_REBUILDERS:   # a stand-in refuses state (_decode_only)
            return found.__module__ == __name__ and found.__name__ in HELD_REBUILDERS
        return found.__module__ != __name__ or found.__name__ in HELD_REBUILDERS
    if not isinstance(found, type):
        # an object the judge holds that is no class and takes attributes: numpy's ufuncs
        # (`np.all`, and so `np.allclose`, calls `np.logical_and.reduce` as the ufunc's
        # attribute: a message that set it to the class Exception, which makes a truthy
        # object of any arguments, made every np.allclose of the test true)
        return isinstance(getattr(found, "__dict__", None), dict) or \
            _SINGLETONS.get(id(found)) is found
    return False


def _settable_class(found):
    """A class whose attributes can be set (a Python class, not a built-in type)."""
    if not isinstance(found, type):
        return False
    flags = found.__flags__
    return bool(flags & _HEAPTYPE) and not flags & _IMMUTABLETYPE


def _class_snapshot(cls):
    _set_up_class(cls)
    return (cls, dict(cls.__dict__), cls.__bases__, type(cls), cls.__name__,
            cls.__qualname__)


def _set_up_class(cls):
    """What a library does once to a class when its first instance is made or rebuilt,
    done before the message is decoded, so the decoder does not take it for the message
    changing the class: torch's optimizers wrap their class's `step` in a profiling hook
    (`Optimizer._patch_step_function`, also run by `__setstate__`), and a correct
    solution returning an Adagrad the judge had not made yet was `tampered`."""
    optim = sys.modules.get("torch.optim")
    base = getattr(optim, "Optimizer", None)
    if base is None or not isinstance(cls, type) or not issubclass(cls, base) or \
            getattr(getattr(cls, "step", None), "hooked", False):
        return
    try:
        base._patch_step_function(object.__new__(cls))
    except Exception:   # noqa: BLE001 - left to the decoder's check, as before
        pass


# Class attributes a library's own __setstate__ advances, never a behaviour: torch's
# RemovableHandle keeps `next_id` above every handle id it has seen (a lazy module's hook
# handle from the solution process has a higher id than any of the judge's).
ADVANCING_COUNTERS = {("torch.utils.hooks", "RemovableHandle"): "next_id"}


def _advanced(cls, key, old, new):
    return ADVANCING_COUNTERS.get((cls.__module__, cls.__qualname__)) == key and \
        type(old) is int and type(new) is int and new >= old


def _restore_classes(snapshots):
    """Put back every class a message changed; their names."""
    changed = []
    for cls, namespace, bases, meta, name, qualname in snapshots.values():
        now = cls.__dict__
        if type(cls) is meta and cls.__bases__ is bases and cls.__name__ == name and \
                cls.__qualname__ == qualname and len(now) == len(namespace) and \
                all(now.get(k, _MISSING) is v or _advanced(cls, k, v, now.get(k))
                    for k, v in namespace.items()):
            continue
        changed.append(qualname)
        for undo in (lambda: setattr(cls, "__class__", meta),
                     lambda: setattr(cls, "__bases__", bases),
                     lambda: setattr(cls, "__name__", name),
                     lambda: setattr(cls, "__qualname__", qualname)):
            try:
                undo()
            except (TypeError, AttributeError):
                pass
        for key in [k for k in list(cls.__dict__) if k not in namespace]:
            try:
                delattr(cls, key)
            except (TypeError, AttributeError):
                pass
        for key, value in namespace.items():
            if cls.__dict__.get(key, _MISSING) is not value:
                try:
                    setattr(cls, key, value)
                except (TypeError, AttributeError):
                    pass
    return changed


@functools.lru_cache(maxsize=1024)
def _may_give_held(cls):
    """Whether making an instance of `cls` may give back an object that existed before
    the message: a `__new__` written in Python in its MRO (numpy's finfo hands back the
    one it cached for the dtype, numpy.ma's MaskedConstant its singleton), or a metaclass
    with its own call (an enum's gives a member)."""
    if type(cls).__call__ is not type.__call__:
        return True
    for klass in cls.__mro__:
        if klass is object:
            break
        new = klass.__dict__.get("__new__")
        if isinstance(getattr(new, "__func__", new), types.FunctionType):
            return True
    return False


# References to an object a REDUCE or NEWOBJ has just made that nothing outside the decoder
# holds: the decoder's stack, `_CheckedUnpickler.made_by`'s name and getrefcount's argument.
_FRESH_REFS = 3


class JudgeUnpickler(pickle.Unpickler):
    """Rebuilds only allowed classes and this module's rebuild functions (C speed); a
    message that names what the judge held already goes to `_CheckedUnpickler`."""

    def __init__(self, file):
        super().__init__(file)
        self.classes = {}   # id -> snapshot of a class the message named

    def find_class(self, module, name):
        found = _resolve(module, name)
        if _changeable(found) or (isinstance(found, type) and _may_give_held(found)):
            # (a class whose making may give back an object the judge holds: whether
            # the message made what a REDUCE gave is checked there, see made_by)
            raise _Recheck()
        if _settable_class(found) and id(found) not in self.classes:
            self.classes[id(found)] = _class_snapshot(found)
        return found

    def persistent_load(self, pid):
        raise NotData("a persistent reference")

    def load(self):
        try:
            value = super().load()
        except BaseException:
            _restore_classes(self.classes)
            raise
        changed = _restore_classes(self.classes)
        if changed:
            raise NotData("a message that changes a class of the judge (%s)"
                          % ", ".join(changed))
        return value


class _CheckedUnpickler(pickle._Unpickler):
    """The same vocabulary, in pickle's Python decoder: state and item opcodes apply only
    to objects this message made (a container it opened, or what a class or rebuild
    function `find_class` resolved returned; never a held handle, class or module)."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file):
        super().__init__(file)
        self.makers = {}   # id -> what find_class resolved that makes new objects
        self.made = {}     # id -> object (both kept alive: no id is reused meanwhile)

    def find_class(self, module, name):
        found = _resolve(module, name)
        if not (getattr(found, "__module__", None) == __name__ and
                getattr(found, "__name__", None) in HELD_REBUILDERS):
            self.makers[id(found)] = found
        return found

    def persistent_load(self, pid):
        raise NotData("a persistent reference")

    def made_by(self, func):
        maker = func.func if type(func) is functools.partial else func
        obj = self.stack[-1]
        if self.makers.get(id(maker)) is maker and \
                not isinstance(obj, (type, types.ModuleType, types.FunctionType,
                                     enum.Enum)) and \
                not (_may_give_held(type(obj)) and sys.getrefcount(obj) > _FRESH_REFS):
            # (what a class's own __new__ gave that something else holds too is no object
            # of the message's: numpy's cached finfo of float64, whose eps a message set
            # to 1.0, made every `np.finfo(np.float64).eps` tolerance of the test pass)
            self.made[id(obj)] = obj

    def target(self, obj):
        if self.made.get(id(obj)) is not obj:
            raise NotData("a message that changes an object the judge holds (%s)"
                          % type(obj).__name__)


def _checked(opcode, before=None, callable_at=None, container=False):
    original = pickle._Unpickler.dispatch[opcode[0]]

    def load(self):
        if before is not None:
            before(self)
        func = self.stack[callable_at] if callable_at else None
        original(self)
        if callable_at:
            self.made_by(func)
        elif container:
            self.made[id(self.stack[-1])] = self.stack[-1]

    _CheckedUnpickler.dispatch[opcode[0]] = load


def _refuse_old_opcode(self):
    # OBJ and INST (protocols 0 and 1) build objects as REDUCE does; no pickler of the
    # boundary writes them
    raise NotData("an object built by a protocol-1 opcode")


for _op in (pickle.EMPTY_DICT, pickle.EMPTY_LIST, pickle.EMPTY_SET, pickle.DICT, pickle.LIST):
    _checked(_op, container=True)
_checked(pickle.REDUCE, callable_at=-2)
_checked(pickle.NEWOBJ, callable_at=-2)
_checked(pickle.NEWOBJ_EX, callable_at=-3)
_checked(pickle.BUILD, before=lambda self: self.target(self.stack[-2]))
_checked(pickle.SETITEM, before=lambda self: self.target(self.stack[-3]))
_checked(pickle.APPEND, before=lambda self: self.target(self.stack[-2]))
for _op in (pickle.SETITEMS, pickle.APPENDS, pickle.ADDITEMS):
    _checked(_op, before=lambda self: self.target(self.metastack[-1][-1]))
for _op in (pickle.OBJ, pickle.INST):
    _CheckedUnpickler.dispatch[_op[0]] = _refuse_old_opcode


def _unpickle(data):
    try:
        return JudgeUnpickler(io.BytesIO(data)).load()
    except _Recheck:
        _FRESH_CLOSURES.clear()
        return _CheckedUnpickler(io.BytesIO(data)).load()


def judge_loads(data):
    _FRESH_CLOSURES.clear()   # a closure is filled by the message that made it, or never
    _DECODING[0] += 1
    try:
        return _unpickle(data)
    except NotData:
        raise
    except (CannotCross, BoundaryError):
        raise
    except RecursionError:
        raise NotData("a message nested too deep") from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:   # noqa: BLE001 - a library's SystemExit is no answer
        raise NotData("a message that does not decode: %s: %s"
                      % (type(exc).__name__, str(exc)[:200])) from None
    finally:
        _DECODING[0] -= 1
        _FRESH_CLOSURES.clear()


# -- encoding ------------------------------------------------------------------------------


def _is_iterator(obj):
    return isinstance(obj, (types.GeneratorType, collections.abc.Iterator,
                            types.CoroutineType, types.AsyncGeneratorType))


# The recursion limit while a value is encoded. Pickling costs two or three levels of the
# interpreter's recursion per level of nesting (the C pickler's own, and the Python
# reducer_override it asks), so under the default limit of 1000 a list nested 500 deep,
# or a solution object 450 deep, could not cross, though the test or the function handles
# it in-process (a correct function returning such a tree was an error). The decoder is
# iterative. 10000 levels are a few MB of C stack, well inside the main thread's 8 MB.
ENCODE_RECURSION_LIMIT = 10000


class _Pickler(pickle.Pickler):
    def __init__(self, link, buffer):
        super().__init__(buffer, protocol=PROTOCOL)
        self.link = link

    def dump(self, obj):
        limit = sys.getrecursionlimit()
        if limit >= ENCODE_RECURSION_LIMIT:
            return super().dump(obj)
        sys.setrecursionlimit(ENCODE_RECURSION_LIMIT)
        try:
            return super().dump(obj)
        finally:
            sys.setrecursionlimit(limit)


class JudgePickler(_Pickler):
    """The judge's objects for the solution process: data, mirrors, or handles."""

    def reducer_override(self, obj):
        link = self.link
        if torch is not None and isinstance(obj, torch.Tensor):
            if _judge_leaf(obj):
                again = link.sent_again(obj)
                if again is not None:   # one object in the solution process too
                    return _tsame, (again,)
            # a callback's value joins the open call's request only with the tensors
            # autograd across may name (see JudgeLink.callback_value)
            index = None if link.callback_value and not obj.requires_grad else \
                link.register_request_tensor(obj)
            sticky = link.sticky_tensor(obj, index)
            if type(sticky) is tuple:
                return sticky
            record = _tensor_record(obj)
            origin = None
            if record[3]:   # requires grad: a leaf of the judge or part of its graph
                base = torch._C.TensorBase
                origin = "leaf" if base.is_leaf.__get__(obj) else "graph"
            if sticky is not None:
                return _tt, (sticky, *record[:6], None, index, None, origin, record[7])
            return _t, (*record[:6], None, index, None, origin, record[7])
        if np is not None and type(obj) is np.ndarray and not obj.dtype.hasobject:
            try:
                record = _array_record(obj)
            except CannotCross:
                return NotImplemented
            return _a, (*record, None, link.register_request_array(obj))
        if link.coupled and link.coupled.get(id(obj)) is obj:
            # an optimizer over a handle module's parameters (see coupled_handles)
            return _j, (link.judge_handle(obj), served_dunders(obj), posed_class(obj))
        if torch is not None and isinstance(obj, torch.nn.Module) and \
                link.part_of_a_handle(obj):
            return _j, (link.judge_handle(obj), served_dunders(obj), posed_class(obj))
        mirror = link.mirror_handle_of(obj)
        if mirror is not None:
            handle, class_handle = mirror
            return _mi, (handle, class_handle), dict(obj.__dict__)
        handle = link.solution_handle_of(obj)
        if handle is not None:
            return _si, (handle,)
        if isinstance(obj, types.ModuleType):
            if obj is link.proxy_module:
                return _si, (0,)
            if _shared_module(obj) and isinstance(obj.__name__, str):
                # a module passed as an argument (umap's tests pass np.random): the
                # solution process's own module of that name
                return _import_module, (obj.__name__,)   # the solution may import it
            return _j, (link.judge_handle(obj), served_dunders(obj), posed_class(obj))
        if obj is Ellipsis or obj is NotImplemented:
            return NotImplemented
        view = _dict_view(obj) or _weak_reference(obj) or _thread_local(obj) or \
            _sync_primitive(obj) or _typing_form(obj)
        if view is not None:
            return view
        if isinstance(obj, (types.FrameType, types.CodeType, types.TracebackType,
                            types.CellType)):
            # the judge's own execution state: never a handle for the solution
            raise CannotCross("a value of type %s" % type(obj).__name__)
        method = _library_method(obj)
        if method is not None and _importable(_TYPE(method[0])):
            return _bm, method
        if _numba_dispatcher(obj):
            # a library's compiled function: the solution process's own of that name (as
            # jax pickles its jitted function, the function it wraps went as a handle,
            # since its module holds the jitted one under that name: pennylane's pulse
            # Hamiltonian's jnp.polyval, traced in the solution process, sent the judge
            # its tracers)
            name = _library_function_name(obj)
            if name is not None and _shared_module(sys.modules[name[0]]):
                return _lf, name
        if isinstance(obj, (types.FunctionType, types.MethodType, types.BuiltinMethodType)):
            if not isinstance(obj, types.MethodType) and _importable(obj):
                if type(obj) is types.FunctionType:   # by its name: see _gf
                    link.sent_functions[(obj.__module__, obj.__qualname__)] = obj
                return NotImplemented
            operator = _torch_operator_name(obj)
            if operator is not None:
                # a library's wrapper of torch's operator held in its place (nncf's
                # patched gelu, in the test's GELUActivation): the solution process's own
                # of that name; as a handle the model's forward there ran it here, and
                # nncf's tracing there never saw it
                return _tfn, operator
            name = closure_name(obj) if link.requesting else None
            if name is not None:   # made from a module both have: by value, its cells data
                return (_jc, (link.judge_handle(obj), served_dunders(obj)) + name,
                        closure_state(obj), None, None, _fill_closure)
            return _j, (link.judge_handle(obj), served_dunders(obj), posed_class(obj))
        if isinstance(obj, type):
            if _importable(obj):
                return NotImplemented
            return _j, (link.judge_handle(obj), served_dunders(obj), posed_class(obj))
        if type(obj).__module__.startswith("tensorflow."):
            graph_ref = _tf_reduce(link, obj)
            if graph_ref is not None:
                return graph_ref
            if tf_graphs.tf_loaded() and tf_graphs.holds_graph_elements(obj):
                # a Session, a graph-mode Dataset, Iterator or lookup table: its methods
                # run here, on the judge's graph
                return _j, (link.judge_handle(obj), served_dunders(obj), posed_class(obj))
        if _tf_graph_tensor(obj):
            return _tf_constant(obj)
        type_info = _type_info(obj)
        if type_info is not None:
            return type_info
        member = _enum_member(obj) if isinstance(obj, enum.Enum) else None
        if member is not None and _importable(member[0]):
            return _ens, (*member, _enum_state(obj))
        if not _importable(type(obj)) or isinstance(obj, types.GeneratorType) or \
                isinstance(obj, (io.IOBase,)) or denied_class(type(obj)):
            # what the judge could not rebuild when it comes back (a DataLoader the test
            # passes: Laplace's fit iterates it) goes as a handle, never as a copy
            return _j, (link.judge_handle(obj), served_dunders(obj), posed_class(obj))
        handle_reduce = _hook_handle(obj)
        if handle_reduce is not None:
            if not link.requesting:
                # a hook the solution registered on a judge object it holds a handle to
                # (a callback's value): its remove() must reach the judge's hook dict, not
                # a copy (Grad-CAM's hooks on a test's own module stayed registered)
                return _j, (link.judge_handle(obj), served_dunders(obj), posed_class(obj))
            return handle_reduce
        return NotImplemented


def _crosses_as_handle(obj):
    """A judge module the solution process gets as a handle (a test's own nn.Module
    subclass, a scripted module): its forward runs in the judge, on its own parameters."""
    cls = type(obj)
    return not _importable(cls) or denied_class(cls)


def _arguments_and_their_items(sent):
    """A call's arguments and, one level down, the items of those that are plain
    containers and the attributes of judge objects that cross as handles."""
    self_obj, args, kwargs = sent
    top = [self_obj, *args, *kwargs.values()]
    out = list(top)
    for value in top:
        if type(value) in (list, tuple):
            out.extend(value)
        elif type(value) is dict:
            out.extend(value.values())
        elif torch is not None and not isinstance(value, torch.nn.Module) and \
                value is not None and _crosses_as_handle(value):
            namespace = _namespace(value)
            if namespace is not None:
                out.extend(namespace.values())
    return out


def coupled_handles(sent):
    """id -> object: the optimizers (and the schedulers over them) in a call's arguments
    that must cross as handles to stay coherent with the model they optimize. A module
    that crosses as a handle (a test's own nn.Module subclass) runs forward and backward
    in the judge on the judge's parameters; an optimizer over those parameters sent as a
    copy would step copies of them, and the test's model would never move (ignite's
    create_supervised_trainer: `optimizer.step()` in the solution, the weight the test
    reads unchanged). As a handle its zero_grad and step run in the judge, on the
    judge's parameters and their gradients. An optimizer over modules that cross by value
    crosses by value with them (one pickle: the same tensors) and comes back.
    Cheap on the common call: nothing is walked unless an argument is an optimizer or
    scheduler and another a module crossing as a handle."""
    if torch is None or "torch.optim" not in sys.modules:
        return {}
    optim = torch.optim
    items = _arguments_and_their_items(sent)
    optimizers, schedulers, modules = [], [], []
    for value in items:
        if isinstance(value, optim.Optimizer):
            optimizers.append(value)
        elif isinstance(value, torch.nn.Module):
            if _crosses_as_handle(value):
                modules.append(value)
        elif isinstance((_namespace(value) or {}).get("optimizer"), optim.Optimizer):
            schedulers.append(value)   # an lr scheduler (anything holding `optimizer`)
            optimizers.append(_namespace(value)["optimizer"])
    if not optimizers or not modules:
        return {}
    held = set()
    for module in modules:
        held.update(id(p) for p in module.parameters())
    coupled = {}
    for optimizer in optimizers:
        groups = getattr(optimizer, "param_groups", None) or ()
        if any(id(p) in held for group in groups if isinstance(group, dict)
               for p in group.get("params", ())):
            coupled[id(optimizer)] = optimizer
    for scheduler in schedulers:
        if id(_namespace(scheduler)["optimizer"]) in coupled:
            coupled[id(scheduler)] = scheduler
    return coupled


def _tf_ops():
    return sys.modules.get("tensorflow.python.framework.ops")


def _tf_graph_tensor(obj):
    """A TensorFlow tensor of a graph (a tf.function the judge is tracing), not a value."""
    ops = _tf_ops()
    symbolic = getattr(ops, "SymbolicTensor", None) if ops is not None else None
    return symbolic is not None and isinstance(obj, symbolic)


def _tf_constant(obj):
    """A graph tensor of a tf.function the judge is tracing, for the solution process,
    which computes eagerly: the value the graph holds it as (GPflow's Gauss-Hermite points
    built under the test's tf.function), the result then a constant of the graph. One
    whose value exists only when the graph runs cannot be sent."""
    util = sys.modules.get("tensorflow.python.framework.tensor_util")
    value = util.constant_value(obj) if util is not None else None
    if value is None:
        try:
            name = str(obj.name)
        except Exception:
            name = "a tensor"
        raise CannotSend("a symbolic tensor of a tf.function being traced (%s, its value "
                         "known only when the graph runs)" % name)
    return _tf_ops().convert_to_tensor, (value,)


def _outside_tf_graph():
    """While the judge traces a tf.function: TensorFlow's init_scope, so what it computes
    for the solution process (a test's integrand it calls back) is eager values, as the
    solution's own computation is; else nothing."""
    ops = _tf_ops()
    return ops.init_scope() if ops is not None else _nothing()


# sys.path as the judge had it before pytest ran: what the solution process has too
_SHARED_PATH = []
_SHARED = {}   # module name -> whether the solution process imports it the same


def _shared_module(module):
    """A module the solution process imports the same: not a test module, a conftest or
    anything found through a folder pytest put on sys.path (rootdir, test folders)."""
    if getattr(module, "__curator_hidden__", False) or \
            getattr(module, "__curator_judge_only__", False):
        return False
    name = getattr(module, "__name__", None)
    known = _SHARED.get(name)
    if known is None:
        path = getattr(module, "__file__", None)
        # built in, frozen or a namespace package: shared
        known = not _SHARED_PATH or not isinstance(path, str) or \
            any(path.startswith(root) for root in _SHARED_PATH)
        if isinstance(name, str):
            _SHARED[name] = known
    return known


def _shared_roots():
    roots = set()
    for entry in sys.path:
        if isinstance(entry, str):
            absolute = os.path.abspath(entry or os.getcwd())
            roots.update({absolute.rstrip(os.sep) + os.sep,
                          os.path.realpath(absolute).rstrip(os.sep) + os.sep})
    return sorted(roots)


def judge_only(module):
    """Mark a module the judge imported for pytest (a test module, a conftest)."""
    if isinstance(module, types.ModuleType):
        try:
            module.__curator_judge_only__ = True
        except Exception:
            pass


def _import_module(name):
    import importlib

    return importlib.import_module(name)


def _importable(obj):
    """Defined in a module the solution process has too (not the hidden test module)."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", "")
    if not isinstance(module, str) or module in ("__main__", "solution") or \
            "<" in qualname or module not in sys.modules:
        return False
    return _shared_module(sys.modules[module]) and _held_as(module, qualname, obj)


class SolutionPickler(_Pickler):
    """The solution's values for the judge, in the vocabulary the judge decodes."""

    def reducer_override(self, obj):
        link = self.link
        cls = type(obj)
        if cls is types.FunctionType and obj.__module__ == __name__:
            return NotImplemented   # the rebuild functions themselves, by name
        if (isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)) or
                cls.__name__ in CYTHON_FUNCTIONS) and (
                getattr(obj, "__module__", None), getattr(obj, "__name__", None)) in \
                LIBRARY_REBUILDERS:
            # a numpy scalar's or array's own reconstructor, or pandas' (Cython functions,
            # pickled by name)
            return NotImplemented
        if torch is not None and isinstance(obj, torch.Tensor):
            index = link.unchanged_request_tensor(obj)
            if index is not None:
                return _tref, (index,)
            bases = getattr(self, "_request_bases", None)
            if bases is None:
                bases = self._request_bases = {}
            view = link.request_view(obj, bases)
            record = _tensor_record(obj)
            if view is not None:
                return _tv, (*view, (*record[:6], record[6], None, None, None, record[7]))
            gout = link.gradient_output(obj)
            return _t, (*record[:6], record[6], link.request_index(obj), gout, None,
                        record[7])
        if np is not None and isinstance(obj, np.ndarray):
            ref = link.unchanged_request_array(obj)
            if ref is not None:
                return _aref, (ref,)
            if cls is not np.ndarray and allowed_class(cls) and not _solution_defined(cls):
                # an ndarray subclass of the repository or a library (pennylane's
                # numpy.tensor and its requires_grad, a masked array): numpy's own
                # reduction, rebuilt by the judge from its own class
                return NotImplemented
            note = None if cls is np.ndarray else "%s.%s" % (cls.__module__, cls.__qualname__)
            if obj.dtype == np.dtype(object):
                return _ao, (tuple(obj.shape), list(obj.ravel()), note)
            return _a, (*_array_record(obj), note)
        if isinstance(obj, JudgeObject):
            return _ji, (object.__getattribute__(obj, "_handle"),)
        if np is not None and _jax_array(cls):
            # its values and weak type (jax's own reduction names a function that the
            # judge would have to call with the message's callable: see _ja)
            return _ja, (np.asarray(obj), bool(obj.aval.weak_type))
        if cls.__module__.startswith("tensorflow."):
            graph_ref = _tf_reduce(link, obj)
            if graph_ref is not None:
                return graph_ref
        operator = _torch_operator_name(obj)
        if operator is not None:
            # torch's own operator: the judge's function of that name, for the same code
            return _tfn, (*operator, callable_print(obj), link.handle(obj),
                          _callable_info(obj))
        name = _module_function_name(obj)
        if name is not None:
            return _gf, (*name, link.handle(obj), _callable_info(obj), function_print(obj))
        if cls is types.FunctionType:
            handle = getattr(link, "judge_closures", {}).get(id(obj), (None, None))
            if handle[0] is obj:
                return _ji, (handle[1],)   # the judge's closure made here: its own back
            name = closure_name(obj)
            if name is not None and getattr(link, "replying", False):
                # made from a module both have: by value, its cells data
                return (_sc, (link.handle(obj), _callable_info(obj)) + name,
                        closure_state(obj), None, None, _fill_closure)
            lent = getattr(link, "lent", None)
            if name is not None and lent is not None:
                # lent to the judge as a handle (a forward hook a callback registers on
                # the test's module): the reply sends it by value (see SolutionLink.lent)
                lent[link.handle(obj)] = obj
        if isinstance(obj, MirrorTarget):
            return NotImplemented
        if isinstance(obj, type):
            if (allowed_class(obj) and not _solution_defined(obj) and
                    not made_at_run_time(obj)) or obj is functools.partial:
                return NotImplemented
            return _s, (link.handle(obj), "class", link.class_info(obj))
        if cls is functools.partial and (
                (isinstance(obj.func, type) and allowed_class(obj.func) and
                 not _solution_defined(obj.func)) or
                _module_function_name(obj.func) is not None):
            # partial(LibraryClass, ...), or partial(a module's function, ...) (pyro's
            # Parameterized keeps `partial(_get_sample_fn, name=...)` as a prior): by
            # value, rebuilt by the judge (the function as any by its name: the judge's
            # own if it sent it, else a handle, which _solution_code_inside finds in it)
            return NotImplemented
        method = _library_method(obj) or _library_object_method(obj)
        if method is not None:
            return _bm, (*method, function_print(obj.__func__), link.handle(obj),
                         _callable_info(obj))
        if _numba_dispatcher(obj):
            # a library's compiled function by its name (the judge's own), else a handle
            name = _library_function_name(obj)
            if name is not None:
                return _lf, (*name, function_print(_compiled_py_func(obj)), link.handle(obj),
                             _callable_info(obj))
            return _s, (link.handle(obj), "function", _callable_info(obj))
        if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                            types.BuiltinMethodType, types.MethodWrapperType,
                            types.WrapperDescriptorType)) or \
                cls.__name__ in CYTHON_FUNCTIONS or \
                (callable(obj) and cls.__module__ == "functools"):
            # a compiled library's function (a Cython one: sklearn's metrics) too
            return _s, (link.handle(obj), "function", _callable_info(obj))
        if isinstance(obj, types.ModuleType):
            if isinstance(obj.__name__, str) and sys.modules.get(obj.__name__) is obj and \
                    not _solution_defined_module(obj):
                return _mod, (obj.__name__,)   # a library's module, back as the judge's own
            raise CannotCross("a module (%s)" % obj.__name__)
        if isinstance(obj, (io.IOBase, socket.socket)):
            raise CannotCross("an open file or socket (%s.%s)"
                              % (cls.__module__, cls.__qualname__))
        type_info = _type_info(obj)
        if type_info is not None:
            return type_info
        made_here = made_at_run_time(cls)
        if allowed_class(cls) and not _solution_defined(cls) and not made_here:
            if torch is not None and isinstance(obj, torch.Generator):
                return NotImplemented
            parametrized = _parametrized(obj) if torch is not None else None
            if parametrized is not None:
                return _pm, parametrized
            member = _enum_member(obj) if isinstance(obj, enum.Enum) else None
            if member is not None:
                return _en, member   # the judge's own member of that name
            handle_reduce = _hook_handle(obj) or _thread_local(obj)
            if handle_reduce is not None:
                return handle_reduce
            if _is_iterator(obj) and cls.__module__ == "builtins":
                return _s, (link.handle(obj), "object", None)
            if _library_function_by_name(obj):
                # an instance of a library class that pickles as its module's name for
                # it (numpy's array functions: np.mean, np.linalg.norm), which the judge
                # resolves for classes, dtypes and ufuncs only: a function served here
                # (a correct `return np.mean` was `tampered`: "sent numpy.mean")
                return _s, (link.handle(obj), "function", _callable_info(obj))
            return _reduce_once(link, obj)
        view = _dict_view(obj) or _stdlib_held(obj) or _weak_reference(obj) or \
            _sync_primitive(obj) or _typing_form(obj)
        if view is not None:
            return view
        # a class the judge does not have
        base = nearest_allowed_base(cls)
        note = "%s.%s" % (cls.__module__, cls.__qualname__)
        if _value_base(base):
            if base is tuple and hasattr(cls, "_fields"):
                return _nt, (cls.__name__, tuple(str(f) for f in cls._fields),
                             tuple(tuple.__iter__(obj)))
            return _v, (base, _as_base(base, obj), note)
        if isinstance(obj, BaseException):
            raise CannotCross("an exception object of %s" % note)
        if (_is_iterator(obj) or callable(getattr(cls, "__iter__", None))) and \
                not _solution_defined(cls):
            # an iterator, or an iterable the judge does not rebuild (a DataLoader a
            # correct `make_loader` returns was an error): served here
            return _s, (link.handle(obj), "object", None)
        if not _solution_defined(cls) and not made_here:
            raise CannotCross("a value of type %s" % note)
        state = _instance_state(obj)
        return _m, (link.handle(obj), link.class_info(cls)), state


# (thread, id) of the library objects whose own reduction (`__reduce_ex__`, its
# `__getstate__`) is running in this process, for `_reduce_once`
_REDUCING = set()


def _reduce_once(link, obj):
    """A library object's own reduction, as pickle would make it (copyreg's table, then
    `__reduce_ex__`), unless that reduction is running already: a `__getstate__` that
    calls the judge, whose request holds the object again, would reduce it again without
    end (pyro's PyroModule.__getstate__ walks `self.parameters()`, which calls
    `named_modules(memo, ...)` on the test's own submodule, a judge handle, with `memo`
    holding the module being encoded: `train(gpmodule)` with a test's mean function
    ended in RecursionError). The object inside its own reduction goes as a handle of
    this process's object, which it is."""
    key = (threading.get_ident(), id(obj))
    if key in _REDUCING:
        return _s, (link.handle(obj), "object", None)
    reduce = copyreg.dispatch_table.get(type(obj))
    _REDUCING.add(key)
    try:
        reduced = reduce(obj) if reduce is not None else obj.__reduce_ex__(PROTOCOL)
    finally:
        _REDUCING.discard(key)
    if isinstance(reduced, str):
        _check_by_name(obj, reduced)
    return reduced


def _check_by_name(obj, name):
    """A library object that pickles as a name its module holds it under (pickle's way
    for an object held once) goes by that name only when the judge's decoder gives its
    own object of that name for it (`_resolve`, the same rules in both processes): any
    other is a value that cannot cross, named here. Sent by name all the same, the judge
    read the name as a message naming what is not data, and an honest reply was
    `tampered` ("the solution process sent jax._src.tree_util.dispatch_registry")."""
    module = pickle.whichmodule(obj, name)
    try:
        found = _resolve(module, name)
    except (NotData, CannotCross):
        found = None
    if found is not obj:
        cls = type(obj)
        raise CannotCross("%s.%s, a %s.%s its library pickles by that name, which the "
                          "judge does not rebuild" % (module, name, cls.__module__,
                                                      cls.__qualname__))


def _library_function_by_name(obj):
    """Whether `obj`, an instance of a library class, is a callable its module holds under
    its own name (what pickle saves as that name) and not one of the kinds the judge
    resolves by name (`_resolve`: classes, torch's dtypes and formats, numpy's ufuncs)."""
    if isinstance(obj, type) or not callable(obj) or \
            (np is not None and isinstance(obj, np.ufunc)) or \
            (torch is not None and isinstance(obj, (torch.dtype, torch.layout,
                                                    torch.memory_format, torch.qscheme))):
        return False
    try:
        module, qualname = obj.__module__, obj.__qualname__
    except Exception:   # noqa: BLE001 - an instance without its own names
        return False
    return isinstance(module, str) and isinstance(qualname, str) and \
        module in sys.modules and _held_as(module, qualname, obj)


def _solution_defined_module(module):
    name = module.__name__
    return name in ("solution", "__main__") or name.startswith("solution.") or \
        name == CANDIDATE["module"] or getattr(module, "__curator_solution__", False)


def _solution_defined(cls):
    module = getattr(cls, "__module__", "") or ""
    if not isinstance(module, str):
        return True
    if module == CANDIDATE["module"]:
        qualname = getattr(cls, "__qualname__", "")
        if not isinstance(qualname, str) or qualname.split(".")[0] in CANDIDATE["names"]:
            return True
    return module in ("solution", "__main__") or module.startswith("solution.") or \
        module not in sys.modules or \
        getattr(sys.modules[module], "__curator_solution__", False)


def _as_base(base, obj):
    if base is bool:
        return bool(int.__index__(obj))
    if base in (int,):
        return int.__index__(obj)
    if base is float:
        return float.__float__(obj)
    if base is complex:
        return complex(obj.real, obj.imag)
    if base is str:
        return str.__str__(obj)
    if base in (bytes, bytearray):
        return base(memoryview(obj))
    if base is dict:
        return {k: v for k, v in dict.items(obj)}
    if base is tuple:
        return tuple(tuple.__iter__(obj))
    if base is list:
        return list(list.__iter__(obj))
    if base is collections.defaultdict:
        return collections.defaultdict(obj.default_factory, dict(dict.items(obj)))
    if base is collections.deque:
        return collections.deque(obj, obj.maxlen)
    if issubclass(base, dict):   # Counter, OrderedDict: their items, in order
        return base(dict(dict.items(obj)))
    return base(obj)


def _instance_state(obj):
    try:
        state = dict(object.__getattribute__(obj, "__dict__"))
    except AttributeError:
        state = {}
    for klass in type(obj).__mro__:
        for slot in klass.__dict__.get("__slots__", ()) or ():
            if isinstance(slot, str) and slot not in ("__dict__", "__weakref__"):
                try:
                    state[slot] = object.__getattribute__(obj, slot)
                except AttributeError:
                    pass
    return state


def _callable_info(obj):
    return {"name": str(getattr(obj, "__name__", "function")),
            "qualname": str(getattr(obj, "__qualname__", "function")),
            "doc": getattr(obj, "__doc__", None) if isinstance(
                getattr(obj, "__doc__", None), str) else None}


def _forwardable(name, dunders=frozenset()):
    """A member name a judge's standin of a solution class may forward: a plain name, or
    one of the given dunders."""
    return not (name.startswith("__") and name.endswith("__")) or name in dunders


def _names(value):
    return [name for name in value if type(name) is str] if isinstance(
        value, (list, tuple)) else []


# What a mirror reads through the solution process, as it reads a property: an enum's
# `name`/`value` (enum.property is a DynamicClassAttribute), a cached_property.
PROPERTY_TYPES = (property, types.DynamicClassAttribute, functools.cached_property)


def class_info(cls, handle, link):
    base = nearest_allowed_base(cls)
    methods, props, classfuncs, classattrs, data = [], [], [], [], {}
    seen = set()
    # a class made at run time of classes both have: what it has beyond the stand-in's
    # base (its own attributes, the model's class's forward beside NNCFNetwork) is
    # forwarded to the solution process, where the object is of that class
    made = made_at_run_time(cls)
    for klass in cls.__mro__:
        if klass is object or (klass in base.__mro__ if made else
                               allowed_class(klass) and not _solution_defined(klass)):
            continue
        for name, value in vars(klass).items():
            if name in seen or not isinstance(name, str):
                continue
            seen.add(name)
            if isinstance(value, PROPERTY_TYPES):
                if _forwardable(name):
                    props.append(name)
            elif isinstance(value, (staticmethod, classmethod)):
                if _forwardable(name):
                    classfuncs.append(name)
            elif isinstance(value, (types.FunctionType, types.MethodType)) or (
                    callable(value) and not isinstance(value, type)):
                if _forwardable(name, FORWARDED_DUNDERS):
                    methods.append(name)
            elif isinstance(value, type):
                continue
            elif not name.startswith("__") and isinstance(
                    value, (int, float, str, bytes, bool, type(None), tuple)):
                data[name] = value
            elif _forwardable(name):
                # any other class attribute (an enum's members, a tensor of constants):
                # read through the solution process when the judge asks for it
                classattrs.append(name)
    return {"handle": handle, "name": str(cls.__name__), "qualname": str(cls.__qualname__),
            "base": (base.__module__, base.__qualname__), "methods": methods,
            "props": props, "classfuncs": classfuncs, "classattrs": classattrs,
            "data": data, "dataclass": _dataclass_description(cls),
            # what it was made of, by name: the judge may make the same class of its own
            # definitions for a test's object a call changed so (`_class_made_in_place`)
            "bases": [[str(b.__module__), str(b.__qualname__)] for b in cls.__bases__]
            if made else None,
            "doc": cls.__doc__ if isinstance(cls.__doc__, str) else None}


DATACLASS_FLAGS = ("eq", "order", "frozen", "unsafe_hash")


def _dataclass_description(cls):
    """A dataclass's field names and flags, for the judge to compare its mirrors by their
    fields itself (`_dataclass_dunders`); None for any other class."""
    try:
        if not dataclasses.is_dataclass(cls):
            return None
        params = cls.__dataclass_params__
        return {"fields": [str(f.name) for f in dataclasses.fields(cls)],
                **{flag: bool(getattr(params, flag, False)) for flag in DATACLASS_FLAGS}}
    except Exception:   # noqa: BLE001 - described as any class
        return None


def _dataclass_dunders(link, name, described):
    """The comparisons, hash and dataclass attributes of a mirror of a solution dataclass,
    made here by `dataclasses` from its field names: they compare the mirrors' fields, as
    data, and never ask the solution (a correct function returning `Config(lr=0.1)`
    failed `== Config(lr=0.1)` and `dataclasses.asdict`: a mirror compared by identity).
    Only two mirrors of the same class are compared so; a description the solution made up
    decides no more than its own constructor already does."""
    if not isinstance(described, dict):
        raise NotData("a dataclass without its description")
    fields = described.get("fields")
    flags = {flag: described.get(flag) is True for flag in DATACLASS_FLAGS}
    flags["order"] = flags["order"] and flags["eq"]
    if type(fields) is not list or len(fields) > 1000 or not all(
            type(f) is str and f.isidentifier() and not f.startswith("__") for f in fields):
        raise NotData("a dataclass whose fields are not data")
    try:
        model = dataclasses.make_dataclass(
            name if type(name) is str and name.isidentifier() else "Mirror",
            [(field, object) for field in fields], **flags)
    except (TypeError, ValueError) as exc:
        raise NotData("a dataclass whose fields are not data: %s" % exc) from None
    dunders = {}
    for key in ("__eq__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__"):
        if key in model.__dict__:
            impl = model.__dict__[key]
            dunders[key] = _judged(link, impl) if isinstance(impl, types.FunctionType) \
                else impl
    for key in ("__dataclass_fields__", "__dataclass_params__", "__match_args__"):
        if key in model.__dict__:
            dunders[key] = model.__dict__[key]
    return dunders


# -- framing -------------------------------------------------------------------------------

HEADER = struct.Struct("!cI")


def send_frame(sock, kind, payload):
    sock.sendall(HEADER.pack(kind, len(payload)) + payload)


def recv_frame(sock):
    header = _recv_exact(sock, HEADER.size)
    if header is None:
        return None, None
    kind, size = HEADER.unpack(header)
    if size > MAX_MESSAGE:
        raise NotData("a message of %d bytes" % size)
    payload = _recv_exact(sock, size)
    if payload is None:
        raise NotData("a message cut short")
    return kind, payload


def _recv_exact(sock, size):
    chunks, left = [], size
    while left:
        try:
            chunk = sock.recv(min(left, 1 << 20))
        except InterruptedError:
            continue
        if not chunk:
            if left == size:
                return None
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# -- the solution side -----------------------------------------------------------------------


class JudgeObject:
    """In the solution process: a judge object reached through the channel. It has the
    protocol dunders the judge's object has (`judge_object`): a handle to a test's
    function is callable but not iterable, as the function is (GPflow's ndiagquad tells
    one integrand from a list of them by `isinstance(funcs, Iterable)`)."""

    __slots__ = ("_handle",)

    def __init__(self, handle):
        object.__setattr__(self, "_handle", handle)

    def _ask(self, op, name=None, args=(), kwargs=None):
        return _LINK[0].callback(object.__getattribute__(self, "_handle"), op, name, args,
                                 kwargs or {})

    def __getattr__(self, name):
        return self._ask("getattr", name)

    def __setattr__(self, name, value):
        self._ask("setattr", name, (value,))

    def __bool__(self):   # else truth asks __len__, which a function has not
        return self._ask("dunder", "__bool__")

    def __sklearn_clone__(self):
        """scikit-learn's clone() of a judge estimator (a test's own classifier that
        cleanlab's cross-validation clones): made in the judge, by scikit-learn, from the
        judge's object; a handle to the copy comes back."""
        return self._ask("clone")


def _handle_call(self, *args, **kwargs):
    return self._ask("call", None, args, kwargs)


def _handle_iter(self):
    return self._ask("dunder", "__iter__")


def _handle_next(self):
    return self._ask("dunder", "__next__")


def _handle_len(self):
    return self._ask("dunder", "__len__")


def _handle_getitem(self, key):
    return self._ask("dunder", "__getitem__", (key,))


def _handle_session_run(self, fetches, feed_dict=None, options=None, run_metadata=None):
    """A judge's TensorFlow Session's `run`: the judge's, but for checkpoint ops of the
    mirror it needs, which run here (`tf_graphs.SessionRun`)."""
    def remote(*args):
        return JudgeObject.__getattr__(self, "run")(*args)

    return _LINK[0].session_run.run(remote, lambda: JudgeObject.__getattr__(self, "graph"),
                                    fetches, feed_dict, options, run_metadata)


# The protocols a handle may have, each only when the judge's object has it.
HANDLE_DUNDERS = {"__call__": _handle_call, "__iter__": _handle_iter,
                  "__next__": _handle_next, "__len__": _handle_len,
                  "__getitem__": _handle_getitem}
_HANDLE_CLASSES = {}


def judge_object(handle, dunders=None, posed=None):
    """A handle with the dunders the judge said its object has (None: all of them), whose
    `__class__` is `posed` when the judge names one (see posed_class)."""
    names = frozenset(HANDLE_DUNDERS) if dunders is None else \
        frozenset(name for name in dunders if name in HANDLE_DUNDERS)
    if not isinstance(posed, type):
        posed = None
    cls = _HANDLE_CLASSES.get((names, posed))
    if cls is None:
        namespace = {"__slots__": (), "__qualname__": "JudgeObject"}
        namespace.update((name, HANDLE_DUNDERS[name]) for name in sorted(names))
        if posed is not None:
            namespace["__class__"] = property(lambda self, posed=posed: posed)
            if tf_graphs.is_session_class(posed):
                namespace["run"] = _handle_session_run
        cls = _HANDLE_CLASSES[(names, posed)] = type("JudgeObject", (JudgeObject,), namespace)
    return cls(handle)


POSED_BASES = ("torch.nn.Module", "torch.optim.Optimizer",
               "torch.optim.lr_scheduler.LRScheduler", "torch.utils.data.DataLoader",
               "torch.utils.data.Dataset")


def posed_class(obj):
    """The class a handle of a judge object answers `isinstance` with in the solution
    process: the nearest class of the object's (its own, or a base: a test's own
    nn.Module subclass poses as nn.Module) that the solution process has too, for a
    module, an optimizer or scheduler, a data loader or data set (Laplace's
    `isinstance(self.last_layer, nn.Linear)` on a layer of the test's own model, now a
    handle). Its methods are still the judge's, reached through the handle; None for
    anything else."""
    if tf_graphs.is_session(obj) and _importable(type(obj)):
        return type(obj)   # a TensorFlow 1 Session (Saver.save checks one is)
    if torch is None or not isinstance(obj, _posed_bases()):
        return None
    for klass in type(obj).__mro__:
        if klass in _posed_bases() or (
                klass is not object and _importable(klass) and not denied_class(klass)):
            return klass
    return None


_POSED = []


def _posed_bases():
    if not _POSED:
        import importlib
        bases = []
        for name in POSED_BASES:
            module, _, qualname = name.rpartition(".")
            try:
                bases.append(getattr(importlib.import_module(module), qualname))
            except Exception:
                pass
        _POSED.append(tuple(bases))
    return _POSED[0]


def served_dunders(obj):
    """The protocol dunders of a judge object its handle has: those its type has (a class
    subscripted by its __class_getitem__ too)."""
    cls = type(obj)
    names = [name for name in HANDLE_DUNDERS if getattr(cls, name, None) is not None]
    if isinstance(obj, type) and "__getitem__" not in names and \
            getattr(obj, "__class_getitem__", None) is not None:
        names.append("__getitem__")
    return tuple(names)


class MirrorTarget:
    """Placeholder for a mirror the judge made a copy of (no handle yet)."""


class SolutionLink:
    """The solution process's end: imports the candidate, serves the judge's calls."""

    def __init__(self, sock, module):
        self.sock = sock
        # one request to the judge at a time: each waits for its own answer on the one
        # socket (a correct function mapping the test's model over a thread pool got
        # the answers of the other threads' calls); reentrant, for the calls the judge
        # makes back while it answers
        self.asking = threading.RLock()
        # ...and one process at a time: a forked child (a DataLoader's worker calling the
        # test's transform) writes to and reads from the same socket, so without a lock
        # of the processes' own two workers' requests crossed and each got the other's
        # answer (`_asking`: a lock on a memory file each process opens for itself)
        self._lock_base = os.memfd_create("judge-channel", os.MFD_CLOEXEC)
        self._lock_fd, self._lock_pid, self._lock_held = self._lock_base, os.getpid(), False
        self.module = module
        self.objects = {0: module}   # handle -> object
        self.judge_closures = {}     # id -> (closure made from the judge's, its handle)
        # handle -> closure of a module both have that this call's callbacks gave the
        # judge as a handle (Laplace's hook, registered on a layer of the test's own
        # model): the reply sends each by value, and the judge puts the closure it makes
        # from its own code where the handle is (JudgeLink.replace_lent)
        self.lent = {}
        self.replying = False
        self.ids = {id(module): 0}
        self.infos = {}
        self.request = []            # tensors rebuilt from the current request
        self.versions = {}
        self.states_now = None   # request tensors' states while a reply is encoded
        # the judge's large tensors kept from the last top-level call (see _tt): token ->
        # (tensor, its state); this call's tokens by request index; those given back
        # unchanged by this call's reply
        self.kept, self.tokens_now, self.unchanged_now = {}, {}, set()
        self.arrays = {}             # judge's ref -> (array rebuilt from it, fingerprint)
        self.serving = 0
        self.grad_inputs = []
        self.origins_of = {}         # request index -> "graph" | "leaf" (autograd_across)
        self.graphs = {}
        self.call_id = 0
        self.outputs = None
        self.tf_sync = tf_graphs.GraphSync()   # mirrors of the judge's TensorFlow graphs
        # runs of a judge's Session that need the mirror's checkpoint ops
        self.session_run = tf_graphs.SessionRun(self.tf_sync)
        _LINK[0] = self
        if torch is not None:
            autograd_across.install(_solution_link)

    # handles
    def handle(self, obj):
        key = id(obj)
        handle = self.ids.get(key)
        if handle is None or self.objects.get(handle) is not obj:
            handle = len(self.objects) + 1
            while handle in self.objects:
                handle += 1
            self.objects[handle] = obj
            self.ids[key] = handle
        return handle

    def class_info(self, cls):
        handle = self.handle(cls)
        info = self.infos.get(handle)
        if info is None:
            info = self.infos[handle] = class_info(cls, handle, self)
        return info

    def own_object(self, handle):
        obj = self.objects.get(handle)
        if obj is None:
            raise NotData("an unknown handle")
        return obj

    def mirror_target(self, handle, class_handle):
        if handle is not None and handle in self.objects:
            return self.objects[handle]
        cls = self.objects.get(class_handle)
        if not isinstance(cls, type):
            raise NotData("an unknown class handle")
        obj = cls.__new__(cls)
        self.handle(obj)
        return obj

    def judge_ref(self, handle, dunders=None, posed=None):
        return judge_object(handle, dunders, posed)

    def judge_closure(self, func, handle):
        self.judge_closures[id(func)] = (func, handle)

    # tensors of a request
    def received_tensor(self, value, note, ref, gout, origin=None):
        if ref is not None:
            while len(self.request) <= ref:
                self.request.append(None)
            self.request[ref] = value
            self.versions[id(value)] = _tensor_state(value)
            if origin in ("graph", "leaf"):
                self.origins_of[ref] = origin
        if value.requires_grad:
            self.grad_inputs.append((ref, value))
        return value

    def unchanged_request_tensor(self, obj):
        for index, tensor in enumerate(self.request):
            if tensor is obj:
                seen = self.versions.get(id(obj))
                states = self.states_now
                now = states[id(obj)] if states is not None and id(obj) in states else \
                    None if seen is None else _tensor_state(obj, seen)
                if seen is not None and now == seen:
                    if self.serving == 1 and self.replying:
                        self.unchanged_now.add(index)
                    return index
                return None
        return None

    def kept_token(self, token, value, ref):
        if self.serving == 1 and type(token) is int and type(ref) is int:
            self.tokens_now[ref] = (token, value)

    def kept_tensor(self, token, ref):
        """The copy of a judge's tensor this process kept from the last top-level call."""
        entry = self.kept.get(token) if self.serving == 1 else None
        if entry is None or type(ref) is not int or ref < 0:
            raise NotData("a reference to a tensor the solution process does not keep")
        value, state = entry
        while len(self.request) <= ref:
            self.request.append(None)
        self.request[ref] = value
        self.versions[id(value)] = state
        self.tokens_now[ref] = (token, value)
        return value

    def keep_unchanged(self):
        """After a top-level reply: the large tensors it gave back unchanged are kept
        for the next top-level call, nothing else."""
        self.kept = {token: (value, self.versions[id(value)])
                     for index, (token, value) in self.tokens_now.items()
                     if index in self.unchanged_now and id(value) in self.versions}
        self.tokens_now, self.unchanged_now = {}, set()

    # arrays of the judge's (kept until the next call from the judge's top level)
    def received_array(self, value, ref):
        if type(ref) is int:
            self.arrays[ref] = (value, _array_fingerprint(value))
        return value

    def unchanged_request_array(self, obj):
        for ref, (array, fingerprint) in self.arrays.items():
            if array is obj:
                return ref if _array_fingerprint(obj) == fingerprint else None
        return None

    def request_index(self, obj):
        for index, tensor in enumerate(self.request):
            if tensor is obj:
                return index
        return None

    def request_view(self, obj, bases):
        """(index, shape, stride, offset) of a view `obj` is of a copy of a judge's tensor
        the call's request holds (the same storage: `x.view(-1)`, `x[1:]`, `x.t()`), for
        the judge to make that view of its own (`_tv`); None for anything else, and for
        what needs grad or is no plain strided tensor (those cross as before: a copy).
        `bases`: the message's own dict of the request's storages, filled once."""
        if type(obj) is not torch.Tensor or obj.requires_grad or \
                obj.layout != torch.strided or not self.request:
            return None
        if not bases:
            bases[None] = None
            for index, base in enumerate(self.request):
                if type(base) is torch.Tensor and not base.requires_grad and \
                        base.layout == torch.strided and base.storage_offset() == 0 and \
                        base.is_contiguous():
                    try:
                        pointer = base.untyped_storage().data_ptr()
                    except (RuntimeError, NotImplementedError):
                        continue
                    if pointer:   # an empty tensor's storage is no memory of anything
                        bases.setdefault(pointer, index)
        try:
            index = bases.get(obj.untyped_storage().data_ptr())
        except (RuntimeError, NotImplementedError):
            return None
        if index is None:
            return None
        base = self.request[index]
        if base is obj or base.dtype != obj.dtype or base.device != obj.device:
            return None
        return index, tuple(obj.shape), tuple(obj.stride()), obj.storage_offset()

    # autograd across the boundary (curator.execution.autograd_across)
    def origins(self):
        """(index, copy, kind) of the current call's copies of the judge's tensors that
        required grad there: "graph" for a non-leaf of the judge's graph, "leaf"."""
        request = self.request
        return [(index, request[index], kind) for index, kind in self.origins_of.items()
                if index < len(request) and request[index] is not None]

    @contextlib.contextmanager
    def _asking(self):
        """Hold the channel to the judge for one request and its answer: against this
        process's other threads (`asking`) and against the processes forked from it,
        which share the socket (an exclusive flock on a description of the lock file this
        process opened itself). `ask_judge` lets it go while this process serves a call
        the judge makes meanwhile (the judge then waits for us, and a worker this call
        forks may ask it)."""
        pid = os.getpid()
        if pid != self._lock_pid:
            # a forked child: the parent's RLock may be held by a thread that is not
            # here, and the parent's open description of the lock file is the parent's
            self.asking = threading.RLock()
            self._lock_fd = os.open("/proc/self/fd/%d" % self._lock_base,
                                    os.O_RDWR | os.O_CLOEXEC)
            self._lock_pid, self._lock_held = pid, False
        with self.asking:
            held = self._lock_held
            if not held:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
                self._lock_held = True
            try:
                yield
            finally:
                if not held:
                    self._lock_held = False
                    fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def _serving_meanwhile(self):
        """While this process serves a frame the judge sent before its answer, the
        channel is free for the processes it forks (see _asking)."""
        held = self._lock_held and os.getpid() == self._lock_pid
        if held:
            self._lock_held = False
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        try:
            yield
        finally:
            if held:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
                self._lock_held = True

    def ask_autograd(self, op, outputs, grads, inputs, flags):
        """Ask the judge to run autograd on its own tensors (named by place in this call),
        and wait for the result, serving the judge's frames meanwhile. The results are
        the judge's tensors of this call, placed as it placed them in its request."""
        with self._asking():
            answer = self.ask_judge(b"A", self.dumps((op, outputs, grads, inputs, flags)),
                                    b"a", in_this_call=True)
        if type(answer) is not tuple or len(answer) != 2 or type(answer[1]) is not list:
            raise NotData("an autograd answer of the wrong shape")
        result, lent = answer
        for position, index in lent:
            # this process's own leaf the judge keeps at that place of the call's request
            # (see JudgeLink._serve_autograd): a later request names it there
            if type(position) is not int or type(index) is not int or \
                    not 0 <= position < len(grads) or not 0 <= index < MAX_LENT_INDEX:
                raise NotData("an autograd answer of the wrong shape")
            while len(self.request) <= index:
                self.request.append(None)
            self.request[index] = grads[position]
            self.versions[id(grads[position])] = _tensor_state(grads[position])
            self.origins_of[index] = "leaf"
        return result

    def ask_hook(self, index, hook):
        """Register `hook` (this process's function, a handle there) on the judge's own
        tensor at `index` of the current call (see autograd_across.install): a handle
        whose `remove` asks the judge to remove it."""
        if not callable(hook):
            raise TypeError("expected a callable hook, got %s" % type(hook).__name__)
        with self._asking():
            answer = self.ask_judge(b"H", self.dumps(("add", index, hook)), b"h",
                                    in_this_call=True)
        if type(answer) is not int:
            raise NotData("a hook answer of the wrong shape")
        return JudgeHookHandle(self, answer)

    def remove_hook(self, hook_id):
        with self._asking():
            self.ask_judge(b"H", self.dumps(("remove", hook_id, None)), b"h",
                           in_this_call=True)

    def ask_judge(self, frame, payload, answer, in_this_call=False, joined=None):
        """Send the judge one request and wait for its `answer` frame (or `e`, its
        exception), serving the calls and backward passes it makes meanwhile, each from
        a fresh call state. The answer is read in a fresh state too (a callback's value is
        new to this call), or in_this_call in the current call's (its tensors are this
        call's), as is the `joined` answer (a read's parameter the judge put in this
        call's request, `_judge_leaf`); afterwards the current call's state is as it
        was."""
        saved = (self.request, self.versions, self.grad_inputs, self.outputs,
                 self.origins_of)
        send_frame(self.sock, frame, payload)
        try:
            while True:
                kind, reply = recv_frame(self.sock)
                if kind is None:
                    os._exit(0)
                self.request, self.versions, self.grad_inputs = [], {}, []
                self.outputs, self.origins_of = None, {}
                if kind == answer or (joined is not None and kind == joined):
                    if in_this_call or (kind == joined and self.serving):
                        (self.request, self.versions, self.grad_inputs, self.outputs,
                         self.origins_of) = saved
                    return self.loads(reply)
                if kind == b"e":
                    raise _rebuild_exception_plain(self.loads(reply))
                with self._serving_meanwhile():
                    self.handle_frame(kind, reply)
        finally:
            (self.request, self.versions, self.grad_inputs, self.outputs,
             self.origins_of) = saved

    def tf_graph(self, gid, delta):
        """The mirror of the judge's graph gid (made at its first crossing), with what the
        judge added to its graph since (see tf_graphs)."""
        _allow_tensorflow()
        sync = self.tf_sync
        graph = sync.graphs.get(gid)
        if graph is None:
            graph = sys.modules["tensorflow.python.framework.ops"].Graph()
            sync.adopt(gid, graph)
        if delta is not None:
            sync.receive(gid, graph, delta)
        return graph

    def tf_element(self, graph, kind, name, variable_def=None):
        gid = self.tf_sync.gid_of(graph, make=False)
        return self.tf_sync.element(gid, graph, kind, name, variable_def)

    def adopt_grad(self, index, grad):
        """The judge's .grad of one of its leaves after a backward it ran: the copy's too,
        and the copy counts as unchanged (it stands for the judge's own tensor)."""
        if not 0 <= index < len(self.request) or self.request[index] is None:
            return
        copy = self.request[index]
        copy.grad = grad
        self.versions[id(copy)] = _tensor_state(copy)

    def limit(self, what):
        """A computation the boundary cannot serve honestly: the run ends with the reason
        (never a value that might be wrong)."""
        send_frame(self.sock, b"X", self.dumps(what))
        raise BoundaryError(what)

    def gradient_output(self, obj):
        if self.outputs is None or not obj.requires_grad or obj.grad_fn is None:
            return None
        self.outputs.append(obj)
        return len(self.outputs) - 1

    def note(self, text):
        pass

    # encoding
    def dumps(self, value):
        buffer = io.BytesIO()
        SolutionPickler(self, buffer).dump(value)
        return buffer.getvalue()

    def dumps_reply(self, value):
        """A call's reply: the arguments come back with it and the judge adopts them, so
        a closure over them crosses by value (never in a callback's request, where what
        its cells hold stays here); with them, the judge's tensors the call changed in
        place (`changed_in_place`). Each request tensor's state is taken once for both."""
        self.replying = True
        try:
            changed = self.changed_in_place()
            return self.dumps((*value, self.store_changes(), changed))
        finally:
            self.replying = False
            self.states_now = None

    def store_changes(self):
        """What a top-level call did to this process's library stores (pyro's param
        store), relative to the judge's it was given (`stores`), for the judge's own."""
        if self.serving != 1:
            return {}
        try:
            return stores.changes()
        except Exception:   # noqa: BLE001 - a store this process cannot read: none
            return {}

    def loads(self, data):
        return pickle.loads(data)

    # the loop
    def serve(self):
        while True:
            kind, payload = recv_frame(self.sock)
            if kind is None:
                return
            self.handle_frame(kind, payload)

    def handle_frame(self, kind, payload):
        if kind == b"c":
            self.serve_call(payload)
        elif kind == b"b":
            self.serve_backward(payload)
        else:
            raise NotData("an unexpected frame %r" % kind)

    def serve_call(self, payload):
        top = not self.serving
        if top:
            self.arrays = {}
            self.lent = {}
            self.tokens_now, self.unchanged_now = {}, set()
        self.serving += 1
        try:
            self._serve_call(payload)
        finally:
            self.serving -= 1
            if top:
                self.keep_unchanged()

    def _serve_call(self, payload):
        self.request, self.versions, self.grad_inputs = [], {}, []
        self.origins_of = {}
        self.call_id += 1
        call_id = self.call_id
        try:
            target, sent, grad_enabled, rng = self.loads(payload)
            rng = rng if isinstance(rng, dict) else {}
        except Exception as exc:
            unread = TypeError("the solution process could not read the call's arguments: "
                               "%s: %s" % (type(exc).__name__, str(exc)[:300]))
            send_frame(self.sock, b"E", self.dumps((exception_record(unread), None, [], [])))
            return
        request, versions, inputs = self.request, self.versions, self.grad_inputs
        origins = self.origins_of
        caught = []
        placed = _placed(sent)   # which object sits where in the arguments, before the call
        try:
            set_rng_state(rng.get("rng"))   # draws what it would have drawn in the test
        except Exception:
            pass
        # what a top-level call writes in the judge's folders goes to layers of its own
        # (`sandbox.CallMounts`), sent to the judge after it (`call_files`)
        layered = _mount_call_folders(rng.get("folders"), rng.get("kept")) \
            if self.serving == 1 else None
        set_ambient(rng)
        if self.serving == 1:
            try:
                stores.put(rng.get("stores"))   # the judge's library stores, as it has them
            except Exception:   # noqa: BLE001 - the judge's data: as given, or not at all
                stores.put(None)
        op = None
        try:
            op, name = target
            self_obj, args, kwargs = sent
            graph = rng.get("tf_graph")
            with torch.set_grad_enabled(bool(grad_enabled)) if torch is not None else \
                    _nothing(), _WarningsOf(caught), _OutputOf(self), \
                    _LogsOf(self, rng.get("log_level")), \
                    graph.as_default() if graph is not None else _nothing():
                result = apply_op(self.module, self_obj, op, name, args, kwargs)
        except BaseException as exc:  # the solution's exception is its answer
            self.send_call_files(layered)
            self.send_warnings(caught)
            self.send_rng_state()
            self.request, self.versions, self.origins_of = request, versions, origins
            try:
                self.outputs = None
                reply = self.dumps_reply((exception_record(exc, self), self._after(op, sent),
                                          _rebound(placed, sent), self.lent_now()))
                send_frame(self.sock, b"E", reply)
            except BaseException as inner:
                send_frame(self.sock, b"X", self.dumps(_describe(inner)))
            return
        self.send_call_files(layered)
        self.send_warnings(caught)
        self.send_rng_state()
        self.request, self.versions, self.origins_of = request, versions, origins
        self.outputs = [] if inputs else None
        try:
            reply = self.dumps_reply((result, self._after(op, sent), _rebound(placed, sent),
                                      self.lent_now()))
        except BaseException as exc:
            self.outputs = None
            send_frame(self.sock, b"X", self.dumps(_describe(exc)))
            return
        if self.outputs:
            self.graphs[call_id] = (self.outputs, inputs)
        self.outputs = None
        send_frame(self.sock, b"R", self.dumps(call_id) + reply)

    def _after(self, op, sent):
        """The arguments as they are after the call, for the judge to adopt. A callee
        of this process's own (the target, a solution object or class the judge called
        through its handle) stays here and is the judge's handle there: it goes back as
        None, so a reply brings no solution code the call did not place somewhere."""
        self_obj = sent[0] if isinstance(sent, tuple) and len(sent) == 3 else None
        handle = self.ids.get(id(self_obj)) if op == "call" and self_obj is not None \
            else None
        if handle is not None and self.objects.get(handle) is self_obj:
            return (None, *sent[1:])
        return sent

    def changed_in_place(self):
        """The copies of the judge's tensors this call was given that it changed in place
        (values, grad, requires_grad): its arguments', and those it read from the judge's
        objects it holds as handles (`model.fc.weight`, `model.parameters()` of a test's
        own module). They go back with the reply, for the judge to copy into its own, as
        the same writes reach the test's objects in one process (`nn.init.constant_`,
        `p.fill_()` under no_grad, `requires_grad_(False)`)."""
        states = {}
        changed = [tensor for _, tensor in self._moved(enumerate(self.request), states)]
        self.states_now = states   # for this reply's encoding (unchanged_request_tensor)
        return changed

    def _moved(self, indexed, states=None):
        """(index, copy) of the copies of the judge's tensors among `indexed` ((index,
        tensor) pairs of the call's request) whose state moved since the judge last saw
        it. With `states` (id -> state now, filled here) each is digested when its version,
        grad and requires_grad are as they were (a write through `.data`); without, a
        copy whose version has not moved is not digested again."""
        moved = []
        for index, tensor in indexed:
            if tensor is None:
                continue
            seen = self.versions.get(id(tensor))
            if states is not None:
                if id(tensor) in states:
                    continue
                now = states[id(tensor)] = _tensor_state(tensor, seen) \
                    if seen is not None else None
                if seen is not None and now != seen:
                    moved.append((index, tensor))
            elif seen is not None and (tensor._version, id(tensor.grad),
                                       tensor.requires_grad) != seen[:3]:
                moved.append((index, tensor))
        return moved

    def changed_leaves(self):
        """(index, copy) of the copies of the judge's leaves in the current call's request
        (a parameter of the test's own module, read through its handle) that this call
        changed since the judge last saw them: they go with a call of a judge handle, so
        the judge's code it runs sees them as one process would. pyro's `train` steps
        Adam over the test's mean function's parameters and calls its forward each step:
        the judge's forward kept the first values and the test's trend never moved. A
        copy whose version has not moved is not digested (a write through `.data` goes
        with the reply): this runs at every callback of the call."""
        request = self.request
        return self._moved((index, request[index]) for index, kind in
                           self.origins_of.items() if kind == "leaf" and index < len(request))

    def lent_now(self):
        """The closures lent to the judge, with the reply of the judge's top-level call
        (where the arguments they close over come back too)."""
        return list(self.lent.items()) if self.serving == 1 else []

    def send_aside(self, kind, value):
        """A frame beside the reply (W, L, O, G): what cannot be sent is left out, never
        the reply."""
        try:
            send_frame(self.sock, kind, self.dumps(value))
        except Exception:
            pass

    def send_rng_state(self):
        self.send_aside(b"G", rng_state())

    def send_call_files(self, layered):
        """What the call wrote through its overlays of the judge's folders (frame `F`,
        `call_files.harvest`), which then go: the process waits in its own folder
        (`SOLUTION_HOME`) until the next call enters the judge's as the judge has it."""
        if layered is None:
            return
        entries = []
        try:
            entries = call_files.harvest(layered)
        except Exception:   # noqa: BLE001 - what cannot be read is not sent
            entries = []
        finally:
            try:
                # Out of the layers before they go: the helper detaches them while this
                # process goes on (encoding the reply), and a working folder left inside
                # one is no folder any more (os.getcwd fails: umap's nearest_neighbors
                # reply, numba compiling pynndescent's search in its __getstate__, was
                # "FileNotFoundError ... cannot cross"). The next call enters the judge's
                # folder again (`set_ambient`).
                if SOLUTION_HOME:
                    os.chdir(SOLUTION_HOME[0])
            except OSError:
                pass
            CALL_MOUNTS[0].unmount()   # (it catches its own OSError)
        if entries:
            self.send_aside(b"F", entries)

    def send_warnings(self, caught):
        """The warnings the call issued, for the judge to issue again (pytest.warns, the
        repository's filterwarnings): category as its nearest library class (or the
        solution's own category, a standin there), text."""
        if not caught:
            return
        records = []
        for item in caught[:MAX_WARNINGS]:
            category = _warning_base(item.category)
            if isinstance(item.category, type) and _solution_defined(item.category):
                # the solution's own category: its standin in the judge, a subclass of
                # that base (`pytest.warns(solution.MyWarning)` matches it)
                category = item.category
            records.append((category, str(item.message)[:2000],
                            str(item.filename)[:500], int(item.lineno or 0)))
        self.send_aside(b"W", records)

    def serve_backward(self, payload):
        saved = self.origins_of
        self.origins_of = {}   # the graph of an earlier call: the solution's own autograd
        try:
            call_id, index, grad = self.loads(payload)
            outputs, inputs = self.graphs[call_id]
            tensors = [t for _, t in inputs]
            grads = torch.autograd.grad([outputs[index]], tensors, [grad],
                                        allow_unused=True, retain_graph=True)
            reply = [(ref, g.detach() if g is not None else None)
                     for (ref, _), g in zip(inputs, grads)]
            self.request, self.versions = [], {}
            send_frame(self.sock, b"B", self.dumps(reply))
        except BaseException as exc:
            send_frame(self.sock, b"X", self.dumps("backward failed: %s: %s"
                                                   % (type(exc).__name__, exc)))
        finally:
            self.origins_of = saved

    def callback(self, handle, op, name, args, kwargs):
        """A judge object's call, read or iteration. A call's value is read into the
        current call's state: the judge's tensors in it that require grad join this
        call's request, so a loss the solution computes from a judge module's output
        differentiates into the judge's parameters (`loss.backward()` across,
        `adopt_grad`). What a read or an iteration gives (a DataLoader's batches) is data,
        read in a fresh state, as the judge encodes it (`_serve_callback_eagerly`)."""
        # a call carries the library contexts this process holds open (pennylane's
        # queue), and what the judge recorded in its own copies comes back with the
        # value, in the same message (the test's measurement is the object it queued)
        contexts = stacks.active() if op == "call" else {}
        request = (handle, op, name, args, kwargs) + ((contexts,) if contexts else ())
        pushed = self.changed_leaves() if op == "call" and self.serving else []
        if pushed:
            request = (handle, op, name, args, kwargs, contexts, pushed)
        try:
            payload = self.dumps(request)
        except CannotCross:
            if not contexts:
                raise
            # a context that cannot cross goes withheld: the callee fails only if it uses
            # that library (see curator.execution.stacks); anything else still fails here
            for key, data in list(contexts.items()):
                try:
                    self.dumps(data)
                except CannotCross as exc:
                    contexts[key] = stacks.withheld(exc)
            payload = self.dumps(request)
        try:
            with self._asking():
                reply = self.ask_judge(b"C", payload,
                                       b"r", in_this_call=bool(self.serving) and op == "call",
                                       joined=b"j" if op != "call" else None)
        finally:
            for _, copy in pushed:   # the judge's own tensors are as these now
                self.versions[id(copy)] = _tensor_state(copy)
        if op != "call":
            return reply
        if type(reply) is not tuple or len(reply) != 3 or type(reply[1]) is not list or \
                type(reply[2]) is not dict:
            raise NotData("a callback's reply of the wrong shape")
        _apply_changes((args, kwargs), reply[1])
        try:
            stacks.replay(reply[2], contexts)
        except stacks.StackError as exc:
            raise NotData(str(exc)) from None
        return reply[0]


# -- the global random generators across a call --------------------------------------------
# The judge sends its state with each call, so a function drawing random numbers after the
# test seeded them draws what it would have drawn in-process. The solution's state after
# the call never becomes the judge's (it would choose the judge's next draws): it only
# continues the solution's own sequence when the judge has drawn nothing since.


def rng_state():
    import random

    state = {"random": random.getstate()}
    if torch is not None:
        state["torch"] = bytes(torch.get_rng_state().numpy().tobytes()) if np is not None \
            else bytes(torch.get_rng_state().tolist())
    if np is not None:
        kind, keys, pos, has_gauss, cached = np.random.get_state()
        state["numpy"] = (str(kind), keys.tobytes(), int(pos), int(has_gauss), float(cached))
    return state


def set_rng_state(state):
    import random

    if not isinstance(state, dict):
        return
    if "random" in state:
        random.setstate(state["random"])
    if torch is not None and isinstance(state.get("torch"), bytes):
        torch.set_rng_state(torch.frombuffer(bytearray(state["torch"]), dtype=torch.uint8))
    if np is not None and isinstance(state.get("numpy"), tuple):
        kind, keys, pos, has_gauss, cached = state["numpy"]
        np.random.set_state((kind, np.frombuffer(keys, dtype=np.uint32), pos, has_gauss,
                             cached))


RNG_MARK = 0x6A756467   # the seeds of the states a judge's generator is set to after a call


def set_rng_mark(keys, seed):
    import random

    if "random" in keys:
        random.seed(seed)
    if "numpy" in keys and np is not None:
        np.random.seed(seed % (1 << 32))
    if "torch" in keys and torch is not None:
        torch.default_generator.manual_seed(seed)


# What else the test set around the call and the function sees in-process: the default
# dtype, deterministic algorithms, the working directory and the environment variables
# the judge changed since it started (monkeypatch.setenv, chdir). Judge to solution only.
_BASE_ENV = {}


CALL_MOUNTS = []   # the solution process's sandbox.CallMounts, when it has them
SOLUTION_HOME = []   # the solution process's own folder, which no call layer covers


def _mount_call_folders(folders, kept):
    """Overlays over the judge's folders this call may write (`call_folders`), each
    holding what the judge kept of the solution's earlier files (`kept`); with what those
    are in the layers now (`call_files.layered`), or None when there are none or the
    process has no layers of its own."""
    if not CALL_MOUNTS or not isinstance(folders, list) or not folders or \
            not all(isinstance(f, str) for f in folders):
        return None
    try:
        kept = kept if isinstance(kept, list) else []
        mounted = CALL_MOUNTS[0].mount(folders, kept)
        return call_files.layered(mounted, kept) if mounted else None
    except Exception:
        return None


def ambient(base_env):
    state = {"cwd": os.getcwd(), "log_level": logging.getLogger().getEffectiveLevel()}
    if _MODULE_VALUES:
        state["module_values"] = _MODULE_VALUES[0].changed()
    env = os.environ
    state["env"] = {k: v for k, v in env.items() if base_env.get(k) != v}
    state["unset"] = [k for k in base_env if k not in env]
    if torch is not None:
        state["dtype"] = str(torch.get_default_dtype()).rpartition(".")[2]
        state["deterministic"] = bool(torch.are_deterministic_algorithms_enabled())
    return state


def set_ambient(state):
    set_module_values(state.get("module_values"))
    if not _BASE_ENV:
        _BASE_ENV["taken"] = dict(os.environ)   # the solution process's own, at its first call
    try:
        wanted = dict(_BASE_ENV["taken"])
        for key in state.get("unset") or ():
            wanted.pop(key, None)
        wanted.update({str(k): str(v) for k, v in (state.get("env") or {}).items()})
        for key in [k for k in os.environ if k not in wanted]:
            del os.environ[key]
        for key, value in wanted.items():
            if os.environ.get(key) != value:
                os.environ[key] = value
    except Exception:
        pass
    try:
        os.chdir(state["cwd"])
    except Exception:
        pass
    if torch is not None:
        try:
            dtype = getattr(torch, str(state.get("dtype", "float32")))
            if isinstance(dtype, torch.dtype) and dtype != torch.get_default_dtype():
                torch.set_default_dtype(dtype)
            if bool(state.get("deterministic")) != torch.are_deterministic_algorithms_enabled():
                torch.use_deterministic_algorithms(bool(state.get("deterministic")))
        except Exception:
            pass


# Plain values of the repository's own modules that the test changed (pyro's
# test_sample sets `pyro.distributions.stable.RADIUS = 0.02` around `d.sample`, whose
# `_unsafe_standard_stable` is the target: the solution process read its own 0.01): the
# judge takes each module's public numbers, strings, bytes, bools and Nones as the module
# left them when it ran (a private one is the library's own bookkeeping, a lazy
# initialisation's `_ready` whose table is no plain value: the solution's table would
# stay unmade) (`ModuleValues`: those already imported when the judge starts, the
# worker's, which ran no test; the rest as the judge imports them), and each call
# carries those that differ now; the solution process sets them in its own modules
# that hold the name and puts back, at the next call, those the judge no longer sends.
# Values only, judge to solution: what a call changes in its own modules stays there.
VALUE_TYPES = (bool, int, float, complex, str, bytes, type(None))
MAX_MODULE_VALUES = 4096     # sent with a call at most (the rest are left as they are)
_MODULE_VALUES = []          # the judge's ModuleValues, when it has one
_SET_VALUES = {}             # solution process: (module, name) -> its own value


def _same_value(a, b):
    return a is b or (type(a) is type(b) and (a == b or (a != a and b != b)))


class ModuleValues:
    """In the judge of a repository run: the plain values of the modules of `roots` (the
    repository's own package) as each module left them, and those changed since."""

    def __init__(self, roots):
        self.roots = frozenset(r for r in roots if r)
        self.taken = {}
        self.finding = False

    def start(self):
        for name, module in list(sys.modules.items()):
            if self.ours(name):
                self.take(name, module)
        sys.meta_path.insert(0, self)
        _MODULE_VALUES[:] = [self]

    def ours(self, name):
        return type(name) is str and name.partition(".")[0] in self.roots

    def take(self, name, module):
        space = getattr(module, "__dict__", None)
        if type(space) is not dict or isinstance(module, SolutionModule):
            return
        self.taken[name] = (space, {key: value for key, value in space.items()
                                    if type(value) in VALUE_TYPES and type(key) is str
                                    and not key.startswith("_")})

    def find_spec(self, fullname, path=None, target=None):
        if self.finding or not self.ours(fullname) or fullname in self.taken:
            return None
        self.finding = True
        try:
            spec = _spec_of_others(self, fullname, path, target)
        finally:
            self.finding = False
        if spec is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _AfterRunLoader(spec.loader, lambda module: self.take(fullname, module))
        return spec

    def changed(self):
        """{module: {name: value}}: the plain values that are not as the module left them
        (a name gone, or now holding anything but a plain value, is left out)."""
        out, count = {}, 0
        for name, (space, values) in self.taken.items():
            for key, old in values.items():
                new = space.get(key, _MISSING)
                if new is old or type(new) not in VALUE_TYPES or _same_value(new, old):
                    continue
                out.setdefault(name, {})[key] = new
                count += 1
                if count >= MAX_MODULE_VALUES:
                    return out
        return out


def set_module_values(values):
    """In the solution process: the judge's changed plain values set in its own modules
    that are imported (a name its module does not hold is left alone); those set at an
    earlier call that the judge no longer sends get their own value back."""
    wanted = {}
    if type(values) is dict:
        for module, names in values.items():
            if type(module) is not str or type(names) is not dict:
                continue
            for key, value in names.items():
                if type(key) is str and not key.startswith("_") and \
                        type(value) in VALUE_TYPES:
                    wanted[(module, key)] = value
    for where in [w for w in _SET_VALUES if w not in wanted]:
        own = _SET_VALUES.pop(where)
        module = sys.modules.get(where[0])
        if module is not None:
            try:
                setattr(module, where[1], own)
            except Exception:
                pass
    for where, value in wanted.items():
        module = sys.modules.get(where[0])
        space = getattr(module, "__dict__", None)
        if type(space) is not dict or where[1] not in space:
            continue
        if where not in _SET_VALUES:
            if type(space[where[1]]) not in VALUE_TYPES:
                continue   # not a plain value here: the solution's module differs
            _SET_VALUES[where] = space[where[1]]
        try:
            setattr(module, where[1], value)
        except Exception:
            pass


# A call that drew from a generator leaves it, in the judge, where the solution's draws
# took it, when that state is the judge's own moved forward by draws: the three
# generators are Mersenne twisters, so the judge twists its own array until it is the
# solution's (at most MAX_RNG_TWISTS times, about ten million 32-bit draws, and
# RNG_WALK_S of a run in all). Nothing of the solution's is taken but how far it drew,
# which an in-process function chooses as well: the array is the judge's own, a cached
# normal sample the call changed is dropped, and a state no draws reach (the function
# seeded) gives the fixed mark (set_rng_mark). A test that seeds, builds a model with
# the function and then draws its input (deepchem's MultilayerPerceptron) draws what it
# draws in-process.
MAX_RNG_TWISTS = 16384
RNG_WALK_S = 2.0
_MT_N = 624
_TORCH_RNG_BYTES = 5056          # torch's CPU generator state (CPUGeneratorImplState)
_TORCH_RNG_ARRAY = 24            # offset of its 624 words, each held in 64 bits
_TORCH_RNG_CACHES = 24 + 8 * _MT_N   # its cached normal samples, to the end
_TORCH_RNG_VALID = ((_TORCH_RNG_CACHES + 24, 4), (_TORCH_RNG_CACHES + 36, 1))


def _mt_twist(mt):
    """The Mersenne twister's next array (624 uint32 words) from `mt`."""
    upper, lower, matrix = np.uint32(0x80000000), np.uint32(0x7FFFFFFF), np.uint32(0x9908B0DF)
    new = np.empty_like(mt)

    def part(lo, hi, following, far):
        y = (mt[lo:hi] & upper) | (following & lower)
        new[lo:hi] = far ^ (y >> np.uint32(1)) ^ ((y & np.uint32(1)) * matrix)

    part(0, 227, mt[1:228], mt[397:624])
    part(227, 454, mt[228:455], new[0:227])
    part(454, 623, mt[455:624], new[227:396])
    part(623, 624, new[0:1], new[396:397])
    return new


def _mt_parts(key, state):
    """(array, position: words of it drawn, the rest) of a generator's state; None when it
    is not a Mersenne twister's as the judge knows it."""
    try:
        if key == "random":
            version, words, gauss = state
            if len(words) != _MT_N + 1:
                return None
            return np.array(words[:_MT_N], dtype=np.uint32), int(words[_MT_N]), gauss
        if key == "numpy":
            kind, keys, pos, has_gauss, cached = state
            if kind != "MT19937":
                return None
            return np.frombuffer(keys, dtype=np.uint32).copy(), int(pos), \
                (has_gauss, cached)
        if key == "torch" and isinstance(state, bytes) and len(state) == _TORCH_RNG_BYTES:
            words = np.frombuffer(state, dtype="<u8", count=_MT_N, offset=_TORCH_RNG_ARRAY)
            if (words >> np.uint64(32)).any():
                return None
            left = struct.unpack_from("<i", state, 8)[0]
            return words.astype(np.uint32), _MT_N + 1 - left, state[_TORCH_RNG_CACHES:]
    except (TypeError, ValueError, OverflowError):
        return None
    return None


def _mt_state(key, given, array, pos, caches_kept):
    """The judge's state of generator `key`: `given` with the array and position set and
    its cached normal sample dropped unless the call left it as it was."""
    if key == "random":
        version, _words, gauss = given
        return (version, tuple(int(w) for w in array) + (pos,),
                gauss if caches_kept else None)
    if key == "numpy":
        kind, _keys, _pos, has_gauss, cached = given
        return (kind, array.astype(np.uint32).tobytes(), pos,
                *((has_gauss, cached) if caches_kept else (0, 0.0)))
    state = bytearray(given)
    state[_TORCH_RNG_ARRAY:_TORCH_RNG_CACHES] = array.astype("<u8").tobytes()
    struct.pack_into("<i", state, 8, _MT_N + 1 - pos)
    struct.pack_into("<Q", state, 16, pos)
    if not caches_kept:
        for offset, size in _TORCH_RNG_VALID:
            state[offset:offset + size] = bytes(size)
    return bytes(state)


def rng_continuation(key, given, solution, deadline):
    """The judge's state of generator `key` after the call when the solution's is `given`
    moved forward by draws (see MAX_RNG_TWISTS), else None."""
    if np is None:
        return None
    start, end = _mt_parts(key, given), _mt_parts(key, solution)
    if start is None or end is None or not 0 <= end[1] <= _MT_N:
        return None
    array, pos = start[0], start[1]
    if np.array_equal(array, end[0]):
        if end[1] < pos:
            return None
    else:
        for twists in range(MAX_RNG_TWISTS):
            array = _mt_twist(array)
            if np.array_equal(array, end[0]):
                break
            if twists % 64 == 63 and time.monotonic() > deadline:
                return None
        else:
            return None
        if end[1] < 1:
            return None
    return _mt_state(key, given, array, end[1], end[2] == start[2])


def _valid_rng_state(state):
    if not isinstance(state, dict) or not set(state) <= {"random", "torch", "numpy"}:
        return False
    python = state.get("random")
    if python is not None and not (isinstance(python, tuple) and len(python) == 3 and
                                   isinstance(python[1], tuple) and len(python[1]) == 625 and
                                   all(type(v) is int for v in python[1])):
        return False
    if "torch" in state and not isinstance(state["torch"], bytes):
        return False
    numpy_state = state.get("numpy")
    return numpy_state is None or (isinstance(numpy_state, tuple) and len(numpy_state) == 5
                                   and isinstance(numpy_state[1], bytes)
                                   and len(numpy_state[1]) == 624 * 4)


MAX_WARNINGS = 100   # per call, issued again in the judge
MAX_CALL_OUTPUT = 256 << 10   # characters of a call's prints the judge writes again


class _Capped(io.TextIOBase):
    """sys.stdout or sys.stderr during a call: kept for the judge up to a limit, the
    rest written where it would have gone (the run's capped output)."""

    def __init__(self, original):
        super().__init__()
        self.original, self.parts, self.size = original, [], 0

    def write(self, text):
        text = text if isinstance(text, str) else str(text)
        if self.size + len(text) <= MAX_CALL_OUTPUT:
            self.parts.append(text)
            self.size += len(text)
        elif self.original is not None:
            self.original.write(text)
        return len(text)

    def writable(self):
        return True

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        return self.original.fileno()

    @property
    def encoding(self):
        return getattr(self.original, "encoding", None) or "utf-8"

    @property
    def buffer(self):
        """The bytes side (`sys.stdout.buffer.write(...)`): decoded into the same text.
        Without it a correct function that wrote bytes failed with AttributeError."""
        return _CappedBytes(self)

    def text(self):
        return "".join(self.parts)


class _CappedBytes(io.RawIOBase):
    def __init__(self, stream):
        super().__init__()
        self.stream = stream

    def writable(self):
        return True

    def write(self, data):
        data = bytes(data)
        self.stream.write(data.decode(self.stream.encoding, "replace"))
        return len(data)


MAX_LOG_RECORDS = 200   # per call, handled again by the judge's loggers


class _KeptLogs(logging.Handler):
    """Keeps a call's log records (at most MAX_LOG_RECORDS) as data for the judge."""

    def __init__(self, records):
        super().__init__(logging.NOTSET)
        self.records = records

    def emit(self, record):
        if len(self.records) < MAX_LOG_RECORDS:
            try:
                self.records.append((str(record.name)[:200], int(record.levelno),
                                     str(record.getMessage())[:4000],
                                     str(record.pathname)[:500], int(record.lineno or 0),
                                     str(record.funcName)[:200]))
            except Exception:
                pass


class _LogsOf:
    """The log records a call makes, handled again by the judge's logger of the same
    name (caplog, the repository's logging set-up). The root level is the judge's while
    the call runs, so what the test asked to see is recorded."""

    def __init__(self, link, level):
        self.link = link
        self.level = level if isinstance(level, int) else None

    def __enter__(self):
        self.records = []
        root = logging.getLogger()
        self.handler = _KeptLogs(self.records)
        self.saved = root.level, root.handlers[:], logging.lastResort
        root.handlers[:] = [self.handler]   # kept for the judge, not printed twice
        logging.lastResort = None
        # setLevel clears the cache of every logger (torch has hundreds): only on a change
        if self.level is not None and root.level != self.level:
            root.setLevel(self.level)
        return self

    def __exit__(self, *exc):
        root = logging.getLogger()
        level, handlers, last = self.saved
        root.handlers[:] = handlers
        if root.level != level:
            root.setLevel(level)
        logging.lastResort = last
        if self.records:
            self.link.send_aside(b"L", self.records)
        return False


class _OutputOf:
    """What a call prints, sent to the judge, which prints it again where the test
    (capsys) or the run's log sees it."""

    def __init__(self, link):
        self.link = link

    def __enter__(self):
        self.saved = sys.stdout, sys.stderr
        self.out, self.err = _Capped(sys.stdout), _Capped(sys.stderr)
        sys.stdout, sys.stderr = self.out, self.err
        return self

    def __exit__(self, *exc):
        sys.stdout, sys.stderr = self.saved
        out, err = self.out.text(), self.err.text()
        if out or err:
            self.link.send_aside(b"O", (out, err))
        return False


class _WarningsOf:
    """Records the warnings a call issues (each one: the judge's filters decide)."""

    def __init__(self, into):
        self.into = into
        self._context = warnings.catch_warnings(record=True)
        self._log = []

    def __enter__(self):
        self._log = self._context.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        self.into[:] = list(self._log)
        self._context.__exit__(*exc)
        return False


def _warning_base(category):
    for klass in getattr(category, "__mro__", ()):
        if isinstance(klass, type) and issubclass(klass, Warning) and \
                allowed_class(klass) and not _solution_defined(klass):
            return klass
    return UserWarning


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


DUNDERS = {"__len__": len, "__bool__": bool, "__iter__": iter, "__next__": next,
           "__getitem__": lambda obj, key: obj[key]}

# What the solution process may ask of a judge object it holds a handle to: call it, read
# an attribute, iterate or index it. Attribute reads never reach the judge's machinery: no
# dunder but a function's descriptive ones (`__globals__`, `__code__`, `__self__`,
# `__setattr__` would hand out the test module, other tests or a way to rebind them), and
# nothing of frames, code, tracebacks or suspended generators (`gi_frame.f_back` walks to
# the running test). Refused reads are an AttributeError, as a missing attribute is.
SERVED_OPS = ("call", "getattr", "dunder", "clone", "setattr")
READABLE_DUNDERS = frozenset({"__name__", "__qualname__", "__doc__", "__module__",
                              "__annotations__"})
INTROSPECTION_TYPES = (types.FrameType, types.CodeType, types.TracebackType, types.CellType,
                       types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


# Setting an attribute of a judge object the solution was given (pfrl's train_agent counts
# steps on the test's agent, `agent.t = t`) is a mutation of its argument, as in-process: a
# plain attribute, to a value the judge holds as its own. Never a dunder, never on a class,
# module, function or introspection object, never over what the object's class defines as
# a method, property or other descriptor (the tests may call or read it), and never to
# something that runs solution code when called (a test calling `checker.check(result)`
# would get the solution's answer). Refused writes are an AttributeError.
UNWRITABLE_TYPES = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                    types.MethodType, types.BuiltinMethodType, functools.partial,
                    *INTROSPECTION_TYPES)


FUNCTION_TYPES = (types.FunctionType, types.MethodType, types.BuiltinFunctionType,
                  types.BuiltinMethodType, functools.partial)


def _check_writable(target, name, value, runs_solution_code):
    refused = name.startswith("__") and name.endswith("__") or \
        isinstance(target, UNWRITABLE_TYPES) or runs_solution_code(value)
    if not refused:
        defined = inspect.getattr_static(type(target), name, _MISSING)
        refused = defined is not _MISSING and (
            callable(defined) or any(hasattr(type(defined), d)
                                     for d in ("__get__", "__set__", "__delete__")))
    if not refused:
        # nor a function the object holds itself (a checker's `self.check = lambda ...`):
        # replaced by a callable the judge can rebuild (`functools.partial(bool, 1)`) it
        # would answer for the test
        namespace = getattr(target, "__dict__", None)
        current = namespace.get(name, _MISSING) if isinstance(namespace, dict) else _MISSING
        refused = isinstance(current, FUNCTION_TYPES) or \
            (current is not _MISSING and isinstance(value, FUNCTION_TYPES))
    if refused:
        raise AttributeError("%r of a judge object of type %s cannot be set across the "
                             "boundary" % (name, type(target).__name__))


def _judge_clone(target):
    """In the judge: scikit-learn's clone of one of its own estimators, for the solution
    process (which holds only a handle: rebuilding it there from its class, as clone() does
    without this, made an object of the boundary's own handle class)."""
    base = sys.modules.get("sklearn.base")
    if base is None or not hasattr(target, "get_params") or isinstance(target, type):
        raise TypeError("a judge object of type %s is not a scikit-learn estimator to clone"
                        % type(target).__name__)
    return base.clone(target)


def _check_readable(target, name):
    if (name.startswith("__") and name.endswith("__") and name not in READABLE_DUNDERS
            and not (name == "__dict__" and _plain_instance(target))) \
            or isinstance(target, INTROSPECTION_TYPES):
        raise AttributeError("%r of a judge object is not served across the boundary"
                             % (name,))


def _plain_instance(target):
    """Whether a judge object's `__dict__` is served: an instance's, never a class's,
    module's or function's (a namespace of code)."""
    return not isinstance(target, UNWRITABLE_TYPES) and \
        isinstance(getattr(target, "__dict__", None), dict)


def _attribute_dict(target):
    """`obj.__dict__` of a judge instance, for the solution process: a copy of its plain
    attributes (what reading each by name gives; no dunder, as `_check_readable`), never
    the judge's dict itself. pyro's Parameterized._load_pyro_samples asks
    `"_pyro_samples" in module.__dict__` of every submodule, the test's own mean function
    among them (`train(gpmodule)` failed with an AttributeError)."""
    return {key: value for key, value in target.__dict__.items()
            if type(key) is str and not (key.startswith("__") and key.endswith("__"))}


def apply_op(module, self_obj, op, name, args, kwargs):
    if op == "modattr":
        value = module
        for part in str(name).split("."):
            value = getattr(value, part)
        return value
    if op == "call":
        return self_obj(*args, **kwargs)
    if op == "method":
        return getattr(self_obj, name)(*args, **kwargs)
    if op == "getattr":
        return getattr(self_obj, name)
    if op == "setattr":
        setattr(self_obj, name, args[0])
        return None
    if op == "dunder" and name in DUNDERS:
        return DUNDERS[name](self_obj, *args)   # as Python itself applies them
    if op == "jit" and name in JIT_COMPILERS:
        return _jit_in_solution(name, self_obj, args, kwargs)
    if op in ("patch", "unpatch"):
        return _patch_in_solution(op, *args)
    raise NotData("an unknown operation %r" % (op,))


# -- a test's mock.patch of a module or class, mirrored in the solution process -------------

_SAVED_PATCHES = {}   # (module, class path, attribute) -> [originals], innermost last
_MISSING = object()


def _patch_in_solution(op, module_name, path, attribute, value=None, method=False):
    import importlib

    owner = sys.modules.get(module_name) or importlib.import_module(module_name)
    for part in path.split(".") if path else ():
        owner = getattr(owner, part)
    key = (module_name, path, attribute)
    if op == "patch":
        original = owner.__dict__.get(attribute, _MISSING) if isinstance(owner, type) \
            else getattr(owner, attribute, _MISSING)
        _SAVED_PATCHES.setdefault(key, []).append(original)
        if method and isinstance(owner, type):
            # the judge's function set on a class: bound to the instance, as it would be
            def method_(self, *args, **kwargs):
                return value(self, *args, **kwargs)

            setattr(owner, attribute, method_)
        else:
            setattr(owner, attribute, value)
        return None
    saved = _SAVED_PATCHES.get(key)
    if saved:
        original = saved.pop()
        if original is _MISSING:
            try:
                delattr(owner, attribute)
            except AttributeError:
                pass
        else:
            setattr(owner, attribute, original)
    return None


# torch.jit's compilers of a target called in the judge: the candidate is compiled where
# it lives, in the solution process, and the judge calls the compiled one there.
JIT_COMPILERS = ("script", "trace")


def _jit_in_solution(name, obj, args, kwargs):
    import torch as torch_

    compiled = getattr(torch_.jit, name)(obj, *args, **kwargs)

    def compiled_target(*call_args, **call_kwargs):
        return compiled(*call_args, **call_kwargs)

    compiled_target.__name__ = str(getattr(obj, "__name__", "target"))
    compiled_target.__qualname__ = "<compiled %s>" % compiled_target.__name__
    compiled_target.__module__ = "solution"   # a handle for the judge, never by name
    return compiled_target


def _describe(exc):
    if isinstance(exc, CannotCross):
        return str(exc)
    return "%s: %s" % (type(exc).__name__, str(exc)[:500])


# What of an exception crosses as itself (its args, a solution error's attributes); the
# rest as text. Exact types: a str subclass would bring its own methods.
PLAIN_ARGS = (str, int, float, bool, type(None))


def exception_record(exc, link=None):
    """(module, qualname, args, message, text, original) of an exception: its nearest
    allowed class, or (with the solution's link) for an exception class the solution
    defines on an Exception, None and that class's description with the instance's plain
    attributes (`state`), so the judge raises its standin: `pytest.raises(solution.E)`."""
    cls = type(exc)
    base = BaseException
    for klass in cls.__mro__:
        if allowed_class(klass) and issubclass(klass, BaseException) and (
                klass.__module__ != "builtins" or
                getattr(builtins, klass.__name__, None) is klass):
            base = klass
            break
    args = []
    for arg in getattr(exc, "args", ()) or ():
        if type(arg) in PLAIN_ARGS:
            args.append(arg)
        else:
            args.append(_safe_str(arg))
    text = "".join(traceback.format_exception(cls, exc, exc.__traceback__))[-6000:]
    original = cls.__qualname__ if cls.__module__ == "builtins" else \
        "%s.%s" % (cls.__module__, cls.__qualname__)
    if link is not None and issubclass(base, Exception) and _solution_defined(cls):
        info = dict(link.class_info(cls))
        info["state"] = {key: value for key, value in getattr(exc, "__dict__", {}).items()
                         if type(key) is str and not key.startswith("__") and
                         type(value) in PLAIN_ARGS}
        return (None, info, tuple(args), _safe_str(exc), text, original)
    return (base.__module__, base.__qualname__, tuple(args), _safe_str(exc), text, original)


def _safe_str(value):
    try:
        text = str(value)
    except BaseException:
        text = "<unprintable %s>" % type(value).__name__
    return text if type(text) is str else "<unprintable>"


def _rebuild_exception_plain(record):
    """In the solution process: the judge's exception, as its own type when it can be."""
    module, qualname, args, message, text, original = record
    cls = getattr(builtins, qualname, None) if module == "builtins" else None
    if cls is None and module in sys.modules:
        cls = getattr(sys.modules[module], qualname, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(*args)
        except Exception:
            pass
    return RuntimeError("the judge raised %s: %s" % (original, message))


def solution_main(sock_fd, path, source):
    """The solution process: import the candidate as `solution`, then serve."""
    sock = socket.socket(fileno=sock_fd)
    module = types.ModuleType("solution")
    module.__file__ = path
    module.__curator_solution__ = True
    sys.modules["solution"] = module
    link = SolutionLink(sock, module)
    try:
        code = compile(source, path, "exec", dont_inherit=True)
        exec(code, module.__dict__)
    except BaseException as exc:
        try:
            send_frame(sock, b"I", link.dumps(("error", exception_record(exc))))
            link.serve()   # until the judge is done: not importing is not an early end
        except BaseException:
            pass
        return 1
    _serve_imported(link, module)
    return 0


def _serve_imported(link, module):
    names = {}
    for name, value in list(module.__dict__.items()):
        if not name.startswith("__"):
            names[name] = "class" if isinstance(value, type) else (
                "function" if callable(value) else "data")
    send_frame(link.sock, b"I", link.dumps(("ok", names)))
    link.serve()


def solution_repo_main(sock_fd, module_name, candidate_names):
    """The solution process of a repository run: import the patched module (the
    repository's package around it is the checkout's own) and serve its target."""
    sock = socket.socket(fileno=sock_fd)
    CANDIDATE["module"] = module_name
    CANDIDATE["names"] = frozenset(candidate_names)
    link = SolutionLink(sock, None)
    try:
        import importlib

        module = importlib.import_module(module_name)
    except BaseException as exc:
        try:
            send_frame(sock, b"I", link.dumps(("error", exception_record(exc))))
            link.serve()
        except BaseException:
            pass
        return 1
    link.module = module
    link.objects[0] = module
    link.ids = {id(module): 0}
    _serve_imported(link, module)
    return 0


# -- the judge side --------------------------------------------------------------------------


def _solution_link():
    link = _LINK[0]
    return link if isinstance(link, SolutionLink) else None


def install_autograd_across():
    """torch.autograd.grad and backward wrapped for autograd across: in a solution process
    serving a call they reach the judge's tensors; anywhere else (the worker, a judge)
    they are torch's own (see autograd_across.install)."""
    if torch is not None:
        autograd_across.install(_solution_link)


def _gradient_function():
    from torch.autograd.function import once_differentiable

    class RemoteGradient(torch.autograd.Function):
        @staticmethod
        def forward(ctx, link, call_id, index, holder, *inputs):
            ctx.link, ctx.call_id, ctx.index = link, call_id, index
            ctx.refs = holder[1]
            return holder[0]

        @staticmethod
        @once_differentiable   # a second derivative through it is an error, never zero
        def backward(ctx, grad):
            grads = ctx.link.backward(ctx.call_id, ctx.index, grad, ctx.refs)
            return (None, None, None, None, *grads)

    return RemoteGradient


# What the judge asks of a value it holds: comparisons, hashing, truth, size and membership.
# A mirror's standin inherits them from its library base, whose Python code may call a
# method the solution class overrides (collections.UserList.__eq__ compares self.data
# with self.__cast(other): a solution `_UserList__cast` returning self.data made any wrong
# vocabulary equal to the expected one). While the base's code runs for one of these, the
# solution process is never called (`JudgeLink.judging`): a run that would ask it is a
# crossing error.
JUDGED_DUNDERS = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__",
                  "__bool__", "__len__", "__contains__")


def _judged(link, impl):
    def dunder(self, *args):
        link.judging += 1
        try:
            return impl(self, *args)
        finally:
            link.judging -= 1

    dunder.__name__ = dunder.__qualname__ = impl.__name__
    return dunder


def _shadowed_method(cls, name, value):
    """Whether a message-made instance of a library class holds, under a name its class
    defines as a method, something the judge would call instead of that method."""
    if type(name) is not str or not callable(value):
        return False
    defined = inspect.getattr_static(cls, name, _MISSING)
    return isinstance(defined, (types.FunctionType, staticmethod, classmethod,
                                types.BuiltinFunctionType, types.MethodDescriptorType,
                                types.WrapperDescriptorType))


def _no_method_replaced(link, obj, state):
    """The state a reply gives an object never stands in for a private method its library
    class defines (its own machinery, which its own code calls) with something the judge
    would run itself: a UserList whose `_UserList__cast` is `bool` and whose data is True
    equals anything truthy. On a mirror the solution's code may stand there, its answer
    (the standin's comparisons never call it, JUDGED_DUNDERS); on a library object not even
    that. Public methods are what the test calls in the open (torch's LR scheduler wraps
    its optimizer's `step` in the instance; a module may hold its `forward`). What the
    judge sent and gets back is its own."""
    cls = _TYPE(obj)
    mirror = cls.__dict__.get("__curator_class__") is not None
    for name, value in list(state.items()):
        if not (type(name) is str and name.startswith("_")) or \
                not _shadowed_method(cls, name, value) or (mirror and _is_solution_code(value)):
            continue
        if link.sent_as_handle(value):
            continue
        raise link.violation("a %s whose state replaces its method %s (with a %s)"
                             % (cls.__qualname__, name, _TYPE(value).__qualname__))


RAISED_TEXT = "_curator_raised_text"


def _raised_text(self):
    """str() of the judge's standin of a solution exception: what str() gave in the
    solution process when it was raised; for one the tests make, its args'."""
    text = self.__dict__.get(RAISED_TEXT)
    return text if type(text) is str else BaseException.__str__(self)


class JudgeHookHandle:
    """In the solution process: a hook registered on a judge's tensor (`ask_hook`), as
    torch's RemovableHandle is used."""

    def __init__(self, link, hook_id):
        self.link, self.id = link, hook_id

    def remove(self):
        link, self.link = self.link, None
        if link is not None:
            link.remove_hook(self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class JudgeLink:
    """The judge's end: proxies for the solution, data in and out, copy-back."""

    def __init__(self, sock, report=None):
        self.sock = sock
        self.report = report or (lambda event, **data: None)
        self.proxy_module = None
        self.ready = None
        self.handles = {}          # solution handle -> judge proxy
        self.standins = {}         # class handle -> stand-in class
        self.mirrors = {}          # handle -> mirror
        self.mirror_ids = {}       # id(mirror) -> handle
        self.judge_objects = {}    # judge handle -> object
        self.judge_ids = {}
        self.made_closures = {}    # id -> a closure made from the solution's (its cells adopted)
        self.sent_functions = {}   # (module, qualname) -> a function sent by name (see _gf)
        self.requesting = False    # encoding a call's request (its arguments come back)
        self.coupled = {}          # id -> judge object sent as a handle (coupled_handles)
        self.handle_parts = (0, {})   # (handles, id -> module): see part_of_a_handle
        # encoding a callback's value: its tensors that require grad join the open call's
        # request; the others are plain values, not kept for the rest of the call (a
        # state dict a test's loader returns: swin_v2_b's 350 MB twice over)
        self.callback_value = False
        self.request = []          # the judge's tensors in the current request
        # (id of a request, id of a judge leaf in it) -> (its index, its state when sent);
        # (id of a request, index) -> the judge leaf sent there
        self.leaves_sent, self.leaf_at = {}, {}
        self.grad_request = []
        self.arrays = {}           # ref -> the judge's array sent (during a top-level call)
        self.array_refs = 0
        self.open_calls = 0
        # the large tensors the solution process keeps from the last top-level call (see
        # _tt): id -> (tensor, its state when sent, token); this call's, by request index;
        # the request indices the reply gave back unchanged
        self.sticky, self.tokens_now, self.unchanged_now = {}, {}, set()
        self.token_count = 0
        self.reading_reply = False  # decoding a top-level call's reply
        # The solution's code the judge's objects hold (see _solution_code_inside) is
        # listed before a top-level call and after it: what they hold after it besides,
        # the call left there. Solution code reaches the judge only decoded (`_s`), so the
        # first list is made when the first such value arrives during the call, before
        # it is placed anywhere (`_fence_before`), and a call that brought none needs no
        # list at all: [the call's arguments, the list or None] while a call is open.
        self.fence = None
        self.current = None
        self.notes = []
        self.namedtuples = {}
        self.broken = None
        self.left_behind = {}      # id -> (solution code a call left in a judge object, where)
        self.decoding = 0          # inside _loads: no call may reach the solution process
        self.judging = 0           # inside a mirror's inherited comparison (JUDGED_DUNDERS)
        self.pending_warnings = []
        self.base_env = dict(os.environ)
        # frames that come before a reply, by kind: a callback to serve, or what the call
        # did besides its value (warnings, prints, log records, its random state)
        self._asides = {b"C": self._serve_callback, b"W": self._warnings_received,
                        b"O": self._output_received, b"L": self._logs_received,
                        b"G": self._rng_received, b"A": self._serve_autograd,
                        b"H": self._serve_hook, b"F": self._files_received}
        # the folders of its own the current top-level call may write (`call_files`), and
        # what the judge wrote of the solution's files
        self.call_folders, self.files = None, call_files.JudgeWrites()
        call_files.set_root(os.environ.get("TMPDIR", ""))
        self.tensor_hooks = {}     # id -> torch's handle of a solution hook (_serve_hook)
        self.rng_sent = None       # the judge's random state when it last sent one
        self.rng_solution = None   # the solution's state after that call
        self.rng_given = None      # the state the last call started from
        self.rng_judges = set()    # the generators that call started from the judge's state
        self.rng_marks = 0
        self._gradient = None
        # where a run's boundary time goes: encoding and decoding here, waiting for the
        # solution process (its work and the socket), the solution's import, walks of
        # the judge's objects, twists of its random generators
        self.stats = {"calls": 0, "codec_s": 0.0, "wait_s": 0.0, "ready_s": 0.0, "walk_s": 0.0,
                      "rng_s": 0.0, "kept": 0}
        self.tf_sync = tf_graphs.GraphSync()   # TensorFlow graphs the solution mirrors
        self.call = _eager(self.call)
        _LINK[0] = self
        install_jit_forwarding()
        install_patch_forwarding()
        install_readable_tmp()
        _SHARED_PATH[:] = _shared_roots()

    # -- reporting
    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)
            self.report("rebuilt", what=text)

    def violation(self, what):
        self.broken = "the solution process sent %s" % what
        self.report("tampered", evidence=[self.broken])
        return BoundaryError(self.broken)

    def cannot_cross(self, what):
        self.broken = "%s %s" % (what, CANNOT_CROSS)
        self.report("crossing", message=self.broken)
        return BoundaryError(self.broken)

    def ran_after_the_call(self, where):
        self.broken = "solution code the call left in the test's %s ran after the call " \
            "returned: it %s" % (where, CANNOT_CROSS)
        self.report("crossing", message=self.broken)
        return BoundaryError(self.broken)

    def cannot_send(self, what):
        self.broken = "%s %s" % (what, CANNOT_SEND)
        self.report("crossing", message=self.broken)
        return BoundaryError(self.broken)

    # -- handles and mirrors
    def mirror_handle_of(self, obj):
        handle = self.mirror_ids.get(id(obj))
        if handle is not None and self.mirrors.get(handle) is obj:
            return handle, type(obj).__dict__.get("__curator_class__")
        cls = type(obj)
        class_handle = cls.__dict__.get("__curator_class__") if isinstance(cls, type) else None
        if class_handle is not None and cls in self.standins.values():
            return None, class_handle
        return None

    def solution_handle_of(self, obj):
        if isinstance(obj, type):
            handle = obj.__dict__.get("__curator_class__")
            if handle is not None and self.standins.get(handle) is obj:
                return handle
            return None
        if isinstance(obj, (RemoteFunction, RemoteObject)):
            return object.__getattribute__(obj, "_handle")
        return None

    def judge_handle(self, obj):
        handle = self.judge_ids.get(id(obj))
        if handle is None or self.judge_objects.get(handle) is not obj:
            handle = len(self.judge_objects) + 1
            self.judge_objects[handle] = obj
            self.judge_ids[id(obj)] = handle
        return handle

    def own_object(self, handle):
        obj = self.judge_objects.get(handle)
        if obj is None:
            raise NotData("an unknown judge handle")
        return obj

    def sent_as_handle(self, obj):
        """Whether the solution process holds this judge object as a handle."""
        handle = self.judge_ids.get(id(obj))
        return handle is not None and self.judge_objects.get(handle) is obj

    def part_of_a_handle(self, module):
        """Whether a module is part of a module the solution holds as a handle (a test's
        own model: its layers, read as `model.layer4` or from `model.named_modules()`, or
        handed to a hook the solution registered). Such a part is a handle too: a copy
        would take the solution's forward hooks and changes where the judge's forward
        never sees them (Grad-CAM's hook on `model.layer4`, Laplace's on each of
        `named_modules()`), and one handed to a hook would come back into the judge's
        layer with the copy's hooks. A module a callback makes (a test's factory) is no
        part of one and crosses by value. The parts are listed again when the judge has
        given a new handle, or at a new call of the test's (`_call`)."""
        count, parts = self.handle_parts
        if count != len(self.judge_objects):
            nn = torch.nn
            parts = {id(part): part for root in list(self.judge_objects.values())
                     if isinstance(root, nn.Module) for part in root.modules()}
            self.handle_parts = (len(self.judge_objects), parts)
        return parts.get(id(module)) is module

    def solution_ref(self, handle, kind, info):
        self._fence_before()
        known = self.handles.get(handle)
        if known is not None:
            return known
        if kind == "class":
            made = self.standin(info)
        elif kind == "function":
            made = RemoteFunction(self, handle, info if isinstance(info, dict) else {})
        elif kind == "object":
            made = RemoteObject(self, handle)
        else:
            raise NotData("a handle of unknown kind")
        self.handles[handle] = made
        return made

    def namedtuple(self, name, fields):
        key = (str(name), tuple(fields))
        made = self.namedtuples.get(key)
        if made is None:
            made = self.namedtuples[key] = collections.namedtuple(
                str(name), [str(f) for f in fields], rename=True)
        return made

    def standin(self, info):
        self._fence_before()
        if not isinstance(info, dict):
            raise NotData("a class without its description")
        handle = int(info["handle"])
        if handle in self.standins:
            return self.standins[handle]
        module, qualname = info["base"]
        base = _resolve(module, qualname) if module != "builtins" else getattr(
            builtins, qualname, object)
        if not isinstance(base, type) or base in VALUE_BASES or base is type or (
                issubclass(base, BaseException) and not issubclass(base, Exception)):
            base = object   # an Exception base stays: the standin of a solution's error
        if torch is not None and issubclass(base, torch.Tensor):
            base = object
        link = self
        namespace = {"__module__": "solution", "__qualname__": str(info["qualname"]),
                     "__doc__": info.get("doc"), "__curator_class__": handle}

        def __new__(cls, *args, **kwargs):
            if cls.__dict__.get("__curator_class__") != handle:
                # a class the tests derive from the solution's: its own methods live in
                # the judge and the base's in the solution process, so no object is both
                # (sent, it came back as a handle of the judge's class and called it again)
                raise link.cannot_send("an instance of %s, a class the tests derive from "
                                       "the solution's %s," % (cls.__qualname__,
                                                              info["qualname"]))
            return link.call(("call", None), cls, args, kwargs)

        def __init__(self, *args, **kwargs):
            pass

        if not issubclass(base, BaseException):
            # an error or warning class is made here, as data (its args): the judge's
            # warnings machinery makes the category's instance itself
            namespace["__new__"] = __new__
            namespace["__init__"] = __init__
        # The description comes from the solution process: only the names a mirror may
        # forward become its members. A dunder would decide how the judge compares,
        # hashes, converts or dispatches (`__eq__`, `__torch_function__`,
        # `__array_ufunc__`, `__float__`): those stay the standin's own, never asked.
        for name in _names(info.get("methods")):
            if _forwardable(name, FORWARDED_DUNDERS):
                namespace[name] = RemoteMethod(name)
        if "__exit__" in namespace:
            namespace["__exit__"] = _remote_exit
        if issubclass(base, BaseException):
            # an exception's text is what it said when raised (`solution_exception`):
            # its forwarded __str__ sent the exception back as `self`, and the run ended
            # as an error ("an exception object ... cannot cross")
            namespace["__str__"] = _raised_text
            namespace["__repr__"] = BaseException.__repr__
        for name in _names(info.get("props")):
            if _forwardable(name):
                namespace[name] = _remote_property(name)
        for name in _names(info.get("classattrs")):
            if _forwardable(name) and name not in namespace:
                namespace[name] = _RemoteClassAttribute(link, handle, name)
        data = info.get("data")
        for key, value in (data.items() if isinstance(data, dict) else ()):
            if type(key) is str and _forwardable(key):
                if _shadowed_method(base, key, value):
                    # class_info sends plain values: a callable in place of a method of
                    # the base would be run by the base's own code (UserList.__eq__
                    # calls self.__cast)
                    raise NotData("a class description replacing %s of %s"
                                  % (key, base.__qualname__))
                namespace[key] = value
        for name in JUDGED_DUNDERS:
            impl = getattr(base, name, None)
            if name not in namespace and base is not object and \
                    impl is not getattr(object, name, None) and \
                    isinstance(impl, types.FunctionType):
                namespace[name] = _judged(link, impl)
        if info.get("dataclass") is not None:
            namespace.update(_dataclass_dunders(link, info["name"], info["dataclass"]))
        if "__eq__" in namespace and "__hash__" not in namespace:
            namespace["__hash__"] = getattr(base, "__hash__", None)
        cls = type(str(info["name"]), (base,), namespace)
        for name in _names(info.get("classfuncs")):
            if _forwardable(name):
                setattr(cls, name, _ClassFunction(link, handle, name))
        self.standins[handle] = cls
        return cls

    def mirror_target(self, handle, class_handle):
        raise NotData("a mirror addressed to the solution")

    def judge_ref(self, handle, dunders=None, posed=None):
        return self.own_object(handle)

    # -- tensors
    def register_request_tensor(self, tensor):
        self.request.append(tensor)
        if tensor.requires_grad:
            self.grad_request.append(tensor)
            if _judge_leaf(tensor):
                self.leaves_sent[(id(self.request), id(tensor))] = (
                    len(self.request) - 1, _tensor_state(tensor))
                self.leaf_at[(id(self.request), len(self.request) - 1)] = tensor
        return len(self.request) - 1

    def sent_again(self, tensor):
        """The index of a judge leaf in the current request (a top-level call's, or the
        open call's that a callback's value joins) when it was sent in it before and is
        unchanged since (version, grad, values), else None: the solution process then
        gives its code the copy it was given, as one process gives one object."""
        sent = self.leaves_sent.get((id(self.request), id(tensor)))
        if sent is None:
            return None
        index, state = sent
        if index >= len(self.request) or self.request[index] is not tensor or \
                _tensor_state(tensor, state) != state:
            return None
        return index

    def register_request_array(self, array):
        self.array_refs += 1
        self.arrays[self.array_refs] = array
        return self.array_refs

    def request_array(self, ref):
        array = self.arrays.get(ref) if type(ref) is int else None
        if array is None:
            raise NotData("a reference to an array the judge never sent")
        return array

    def received_array(self, value, ref):
        raise NotData("an array naming the judge's own")   # only the judge sends refs

    def request_tensor(self, index):
        if not isinstance(index, int) or not 0 <= index < len(self.request):
            raise NotData("a reference to a tensor the judge never sent")
        if self.reading_reply:
            self.unchanged_now.add(index)
        return self.request[index]

    def sticky_tensor(self, tensor, index):
        """How a tensor of a top-level request goes (see _tt): the reduction naming what
        the solution process keeps, one sending it with a new token, or None (as any)."""
        if not self.requesting or self.open_calls != 1 or self.callback_value or \
                type(tensor) is not torch.Tensor or index is None:
            return None
        base = torch._C.TensorBase
        try:
            if base.requires_grad.__get__(tensor) or base.grad.__get__(tensor) is not None \
                    or tensor.layout != torch.strided or tensor.device.type != "cpu" or \
                    tensor.is_quantized or tensor.is_inference() or \
                    tensor.numel() * tensor.element_size() < STICKY_MIN_BYTES:
                return None   # (an inference tensor has no version counter)
            state = _tensor_state(tensor)
        except Exception:   # noqa: BLE001 - sent as any tensor is
            return None
        kept = self.sticky.get(id(tensor))
        if kept is not None and kept[0]() is tensor and kept[1] == state:
            self.tokens_now[index] = (tensor, state, kept[2])
            self.stats["kept"] += 1
            return _tk, (kept[2], index)
        self.token_count += 1
        self.tokens_now[index] = (tensor, state, self.token_count)
        return self.token_count

    def keep_unchanged(self):
        """After a top-level call: what its reply gave back unchanged, the solution process
        keeps too (and nothing else). Held weakly here: a tensor the test lets go of is
        not kept alive for the next call (its copy there goes with that call)."""
        self.sticky = {id(t): (weakref.ref(t), state, token)
                       for index, (t, state, token) in self.tokens_now.items()
                       if index in self.unchanged_now}
        self.tokens_now, self.unchanged_now = {}, set()

    def received_tensor(self, value, note, ref, gout, origin=None):
        if note:
            self.note("%s rebuilt as %s" % (note, type(value).__name__))
        current = self.current
        if ref is not None and current is not None:
            if not isinstance(ref, int) or not 0 <= ref < len(current["request"]):
                raise NotData("a reference to a tensor the judge never sent")
            current["changed"][id(value)] = (current["request"][ref], value)
        if gout is not None and current is not None and current["grad_inputs"] and \
                value.layout == torch.strided and \
                value.requires_grad and torch.is_grad_enabled():
            if self._gradient is None:
                self._gradient = _gradient_function()
            plain = value.detach()
            value = self._gradient.apply(self, current["call_id"], int(gout),
                                         [plain, current["grad_refs"]],
                                         *current["grad_inputs"])
        return value

    def backward(self, call_id, index, grad, refs):
        saved = self.request, self.grad_request, self.current
        self.request, self.grad_request, self.current = [], [], None
        try:
            payload = self.dumps((call_id, index, grad.detach()))
            self._send(b"b", payload)
            kind, reply = self._wait()
            if kind != b"B":
                raise self._unexpected(kind, reply)
            grads = self._loads(reply)
        finally:
            self.request, self.grad_request, self.current = saved
        if not isinstance(grads, list):
            raise self.violation("gradients that do not match the inputs")
        out = [None] * len(refs)
        for entry in grads:
            if not isinstance(entry, tuple) or len(entry) != 2:
                raise self.violation("gradients that do not match the inputs")
            ref, g = entry
            if g is None:
                continue
            if not isinstance(g, torch.Tensor) or ref not in refs:
                raise self.violation("a gradient that is not one of an input")
            out[refs.index(ref)] = g
        return out

    def exception(self, module, qualname, args, message, text, original):
        if module is None and isinstance(qualname, dict):
            return self.solution_exception(qualname, args, message, text, original)
        try:
            cls = _resolve(module, qualname)
        except NotData:
            cls = RuntimeError
        if not isinstance(cls, type) or not issubclass(cls, BaseException):
            cls = RuntimeError
        if not issubclass(cls, Exception):
            return BoundaryError("the solution raised %s: %s" % (original, message))
        try:
            exc = cls(*args)
        except Exception:
            try:
                exc = cls(str(message))
            except Exception:
                exc = RuntimeError(str(message))
        if type(exc) is not cls and not isinstance(exc, Exception):
            exc = RuntimeError(str(message))
        if isinstance(text, str) and text:
            exc.add_note("raised in the solution process (%s):\n%s" % (original, text))
        return exc

    def solution_exception(self, info, args, message, text, original):
        """An exception of a class the solution defines on an Exception: an instance of
        the judge's standin of that class (so `pytest.raises(solution.ShapeError)` and
        `except ValueError` both catch it), made here with its args and plain attributes
        as data; nothing of the solution runs to make it."""
        cls = self.standin(info)
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            return self.exception("builtins", "RuntimeError", args, message, text, original)
        exc = BaseException.__new__(cls)
        exc.args = tuple(a for a in args if type(a) in PLAIN_ARGS)
        exc.__dict__[RAISED_TEXT] = str(message)
        state = info.get("state")
        for key, value in (state.items() if isinstance(state, dict) else ()):
            if type(key) is str and _forwardable(key) and \
                    type(value) in PLAIN_ARGS and \
                    not hasattr(cls, key):
                exc.__dict__[key] = value
        if isinstance(text, str) and text:
            exc.add_note("raised in the solution process (%s):\n%s" % (original, text))
        return exc

    # -- encoding
    def tf_graph(self, gid, delta):
        """The judge's graph gid, sent before, with the nodes and collection items the
        solution added to its mirror imported, after the allow-list's check (see
        tf_graphs)."""
        sync = self.tf_sync
        graph = sync.graphs.get(gid) if type(gid) is int else None
        if graph is None:
            raise NotData("a TensorFlow graph the judge never sent")
        if delta is None:
            return graph
        if type(delta) is not tuple or len(delta) != 3 or \
                not isinstance(delta[0], bytes) or type(delta[1]) is not list or \
                not (delta[2] is None or type(delta[2]) is int) or not all(
                    type(item) is tuple and len(item) == 4 and
                    all(type(part) is str for part in item[:3]) and
                    (item[3] is None or type(item[3]) is bytes) for item in delta[1]):
            raise NotData("a TensorFlow graph's additions of the wrong shape")
        try:
            sync.receive(gid, graph, delta, check=_tf_allowed)
        except (NotData, CannotCross):
            raise
        except Exception as exc:
            raise CannotCross("TensorFlow graph nodes the judge cannot import (%s: %s)"
                              % (type(exc).__name__, str(exc)[:300])) from None
        return graph

    def tf_element(self, graph, kind, name, variable_def=None):
        gid = self.tf_sync.gid_of(graph, make=False)
        if gid is None or kind not in ("t", "o", "v") or type(name) is not str or \
                not (variable_def is None or type(variable_def) is bytes):
            raise NotData("a TensorFlow graph element of the wrong shape")
        try:
            return self.tf_sync.element(gid, graph, kind, name, variable_def)
        except Exception as exc:
            raise NotData("a TensorFlow graph element the graph lacks (%s: %s)"
                          % (type(exc).__name__, str(exc)[:200])) from None

    def dumps(self, value):
        started = time.monotonic()
        buffer = io.BytesIO()
        try:
            JudgePickler(self, buffer).dump(value)
        finally:
            self.stats["codec_s"] += time.monotonic() - started
        return buffer.getvalue()

    def _loads(self, data):
        started = time.monotonic()
        self.decoding += 1
        try:
            return judge_loads(data)
        except NotData as exc:
            raise self.violation(str(exc)) from None
        except CannotCross as exc:
            raise self.cannot_cross(str(exc)) from None
        finally:
            self.decoding -= 1
            self.stats["codec_s"] += time.monotonic() - started

    def timings(self):
        return {key: round(value, 6) if isinstance(value, float) else value
                for key, value in self.stats.items()}

    # -- the protocol
    def _send(self, kind, payload):
        """A frame to the solution process. The judge ignores SIGPIPE, as every Python
        process does, so a write to a solution process that has ended is this error, not
        the judge killed by the signal."""
        if self.broken:
            raise BoundaryError(self.broken)
        try:
            send_frame(self.sock, kind, payload)
        except OSError:
            self.broken = "the solution process ended"
            self.report("solution_gone", message=self.broken)
            raise BoundaryError(self.broken) from None

    def _wait(self):
        """The next reply for us; serves the solution's callbacks meanwhile."""
        if self.broken:
            raise BoundaryError(self.broken)
        while True:
            started = time.monotonic()
            try:
                kind, payload = recv_frame(self.sock)
            except NotData as exc:
                raise self.violation(str(exc)) from None
            except OSError as exc:
                kind, payload = None, str(exc)
            finally:
                self.stats["wait_s"] += time.monotonic() - started
            if kind is None:
                self.broken = "the solution process ended"
                self.report("solution_gone", message=self.broken)
                raise BoundaryError(self.broken)
            aside = self._asides.get(kind)
            if aside is None:
                return kind, payload
            aside(payload)

    def _rng_received(self, payload):
        state = self._loads(payload)
        if not _valid_rng_state(state):
            raise self.violation("a random state of the wrong shape")
        self.rng_solution = state

    def _rng_for_call(self):
        """The state each global generator starts the call from: the judge's own, or the
        solution's continuation when the judge has neither drawn from nor seeded that
        generator since the last call (two calls in a row differ)."""
        current = rng_state()
        sent, solution = self.rng_sent or {}, self.rng_solution or {}
        given = {key: solution[key] if key in solution and sent.get(key) == value else value
                 for key, value in current.items()}
        self.rng_sent, self.rng_solution, self.rng_given = current, None, given
        self.rng_judges = {key for key, value in current.items() if given[key] == value}
        return given

    def _rng_after_call(self):
        """A generator the call drew from is set, in the judge, to a fixed state of this
        call's own (never the solution's, which would choose the judge's next draws), so
        a test that seeds it again, to the very state it sent, is seen to have seeded:
        nncf's tests seed numpy before each call of a function that draws from it. It
        continues where the call's draws took it only when the call started from the
        judge's own state: a call that continued the solution's own sequence (the judge
        drew nothing since the last) started from a state the solution chose, so its
        continuation would be one too (a function that set numpy's generator to an array
        of its own making in one call and drew a word in the next made every later
        `np.random.randn` of the test positive, and a wrong `positive_part` passed)."""
        given, solution = self.rng_given or {}, self.rng_solution or {}
        drawn = [key for key in given if key in solution and solution[key] != given[key]]
        if not drawn:
            return
        started = time.monotonic()
        deadline = started + max(0.0, RNG_WALK_S - self.stats["rng_s"])
        moved = {}
        for key in drawn:
            if key not in self.rng_judges:
                continue   # marked below
            state = rng_continuation(key, given[key], solution[key], deadline)
            if state is not None:
                moved[key] = state
        self.stats["rng_s"] += time.monotonic() - started
        set_rng_state(moved)
        marked = [key for key in drawn if key not in moved]
        if marked:
            self.rng_marks += 1
            set_rng_mark(marked, RNG_MARK + self.rng_marks)
        self.rng_sent = rng_state()

    def _logs_received(self, payload):
        records = self._loads(payload)
        if not isinstance(records, list) or len(records) > MAX_LOG_RECORDS or not all(
                isinstance(r, tuple) and len(r) == 6 and isinstance(r[0], str) and
                type(r[1]) is int and isinstance(r[2], str) and isinstance(r[3], str) and
                type(r[4]) is int and isinstance(r[5], str) for r in records):
            raise self.violation("log records of the wrong shape")
        for name, level, message, path, lineno, function in records:
            logger = logging.getLogger(name or None)
            if logger.isEnabledFor(level):
                # "<...>": a path the judge never opens
                logger.handle(logging.LogRecord(name, level, "<%s>" % path, lineno, message,
                                                None, None, function))

    def _output_received(self, payload):
        texts = self._loads(payload)
        if not (isinstance(texts, tuple) and len(texts) == 2 and
                all(isinstance(t, str) and len(t) <= MAX_CALL_OUTPUT for t in texts)):
            raise self.violation("output of the wrong shape")
        for stream, text in zip((sys.stdout, sys.stderr), texts):
            if text:
                try:
                    stream.write(text)
                except Exception:
                    pass

    def _files_received(self, payload):
        """What the top-level call wrote in the judge's folders it was sent: written here
        by the judge itself, under `call_files.JudgeWrites`' rules; each refusal is
        recorded in the run."""
        folders, self.call_folders = self.call_folders, None
        if self.open_calls != 1 or not folders:
            raise self.violation("files out of protocol")
        entries = self._loads(payload)
        if not call_files.well_formed(entries) or \
                not all(0 <= e[0] < len(folders) for e in entries):
            raise self.violation("files of the wrong shape")
        for line in self.files.apply(folders, entries):
            self.report("files_refused", what=line)

    def _warnings_received(self, payload):
        records = self._loads(payload)
        if not isinstance(records, list) or len(records) > MAX_WARNINGS or not all(
                isinstance(r, tuple) and len(r) == 4 and isinstance(r[0], type) and
                issubclass(r[0], Warning) and isinstance(r[1], str) and
                isinstance(r[2], str) and isinstance(r[3], int) for r in records):
            raise self.violation("warnings of the wrong shape")
        self.pending_warnings.extend(records)

    def issue_warnings(self):
        """The solution's warnings of the call that just returned, issued in the judge
        where the test (pytest.warns, -W error) sees them."""
        pending, self.pending_warnings = self.pending_warnings, []
        for category, message, filename, lineno in pending:
            # "<...>": the judge never opens a file the solution names (linecache would
            # read it to show the warning's line)
            warnings.warn_explicit(message, category, "<%s>" % filename, lineno)

    def _unexpected(self, kind, payload):
        if kind == b"X":
            message = self._loads(payload)
            return self.cannot_cross(message if isinstance(message, str) else "a value")
        return self.violation("a frame out of protocol (%r)" % (kind,))

    def _serve_autograd(self, payload):
        """The solution asks for autograd on the judge's own tensors of this call (see
        curator.execution.autograd_across): torch's autograd runs here, with the
        gradients as data; the results are the judge's tensors of this call again."""
        saved = self.current
        self.current = None
        try:
            request = self.parse_autograd(self._loads(payload))
            # the solution's own leaves it gives as gradients under create_graph (backpack's
            # R_op: `torch.autograd.grad(out, params, ws, create_graph=True)` and then the
            # result differentiated with respect to `ws`): kept in this call's request, so a
            # later request can name them, and said where (see autograd_across.lendable)
            lent = []
            flags, grads = request[4], request[2]
            if isinstance(flags, dict) and flags.get("create_graph") is True and \
                    isinstance(grads, list):
                for position, grad in enumerate(grads):
                    if _judge_leaf(grad) and not any(grad is t for t in self.request):
                        lent.append((position, self.register_request_tensor(grad)))
            # a tensor hook of the solution's on the judge's graph (`_serve_hook`) calls
            # into the solution process from inside this autograd: this call's request
            # stays the one the answer's tensors are placed in
            call_request = self.request, self.grad_request
            try:
                result = autograd_across.serve_autograd(self.request, *request)
            except autograd_across.NotAutograd:
                raise
            except Exception as exc:   # torch's own error, the solution's to see
                self.request, self.grad_request = call_request
                record = exception_record(exc)
                self._send(b"e", self.dumps((*record[:4], "", record[5])))
                return
            self.request, self.grad_request = call_request
            if request[0] == "backward":
                # the solution's copies take these .grads (`adopt_grad`): as the judge's
                # leaves are now, so a read of a parameter after the backward gives the
                # copy again (a new copy each step grew the call's request, and the
                # optimizer's step on the first was refused as tampering)
                for index, _ in result:
                    self.leaf_seen(self.request, self.request[index])
            self._send(b"a", self.dumps((result, lent)))
        except autograd_across.NotAutograd as exc:
            raise self.violation(str(exc)) from None
        finally:
            self.current = saved

    def _serve_hook(self, payload):
        """The solution registers a tensor hook on its copy of a non-leaf of the judge's
        graph (autograd_across.install): it goes on the judge's own tensor, named by its
        place in the current call, and calls the solution's function through its handle
        while a call of the test's is open; the gradient it returns replaces the judge's,
        as torch's hook's does. ("remove", id) removes one."""
        saved = self.current
        self.current = None
        try:
            request = self._loads(payload)
        finally:
            self.current = saved
        if not isinstance(request, tuple) or len(request) != 3 or request[0] not in (
                "add", "remove") or type(request[1]) is not int:
            raise self.violation("a hook request of the wrong shape")
        op, index, hook = request
        if op == "remove":
            handle = self.tensor_hooks.pop(index, None)
            if handle is not None:
                handle.remove()
            self._send(b"h", self.dumps(None))
            return
        if not 0 <= index < len(self.request) or \
                not isinstance(self.request[index], torch.Tensor) or \
                self.solution_handle_of(hook) is None:
            raise self.violation("a hook request naming no tensor of the call")
        link = self

        def judge_hook(grad):
            if not link.open_calls:
                return None   # after the call that registered it: answers for nothing
            out = hook(grad)
            if out is not None and (not isinstance(out, torch.Tensor) or
                                    out.shape != grad.shape):
                raise RuntimeError("a tensor hook returned %s for a gradient of shape %s"
                                   % (type(out).__name__, tuple(grad.shape)))
            return out

        hook_id = len(self.tensor_hooks) + 1
        while hook_id in self.tensor_hooks:
            hook_id += 1
        self.tensor_hooks[hook_id] = self.request[index].register_hook(judge_hook)
        self._send(b"h", self.dumps(hook_id))

    def remove_tensor_hooks(self):
        hooks, self.tensor_hooks = self.tensor_hooks, {}
        for handle in hooks.values():
            handle.remove()

    @staticmethod
    def parse_autograd(request):
        if not isinstance(request, tuple) or len(request) != 5:
            raise autograd_across.NotAutograd("an autograd request of the wrong shape")
        return request

    def _serve_callback(self, payload):
        saved = self.request, self.grad_request, self.current
        self.current = None
        try:
            with _outside_tf_graph():
                self._serve_callback_eagerly(payload, saved[:2])
        finally:
            self.request, self.grad_request, self.current = saved

    def _serve_callback_eagerly(self, payload, call_request):
        try:
            request = self._loads(payload)
            if not isinstance(request, tuple) or len(request) not in (5, 6, 7):
                raise self.violation("a request of the wrong shape")
            handle, op, name, args, kwargs = request[:5]
            contexts = request[5] if len(request) >= 6 else {}
            pushed = request[6] if len(request) == 7 else []
            if op not in SERVED_OPS or (op == "dunder" and name not in DUNDERS) or \
                    (op in ("getattr", "setattr") and type(name) is not str) or \
                    type(args) is not tuple or type(kwargs) is not dict or \
                    (op == "setattr" and (len(args) != 1 or kwargs)) or \
                    (len(request) >= 6 and (op != "call" or type(contexts) is not dict or
                                            not (contexts or pushed))):
                # the solution's side only ever asks a handle to be called, read or
                # iterated: anything else (a patch, a setattr) is not ours to serve
                raise self.violation("a request the boundary does not serve (%r)" % (op,))
            try:
                target = self.own_object(handle)
            except NotData as exc:
                raise self.violation(str(exc)) from None
            if pushed:
                self.adopt_pushed(pushed, call_request[0])
            if op == "getattr":
                _check_readable(target, name)
            if op == "setattr":
                _check_writable(target, name, args[0], self.runs_solution_code)
            held = _held_items((args, kwargs), self.sent_as_handle) \
                if op == "call" else None
            try:
                # the solution's open library contexts, as the judge's own for this
                # callback only (see curator.execution.stacks)
                recording = stacks.installed(contexts)
            except stacks.StackError as exc:
                raise self.violation(str(exc)) from None
            with recording as recorded:
                if op == "clone":
                    result = _judge_clone(target)
                elif op == "getattr" and name == "__dict__":
                    result = _attribute_dict(target)
                else:
                    result = apply_op(None, target, op, name, args, kwargs)
            # a call's value: its tensors that require grad join the open call's request
            # (the solution reads it in that call's state: `callback`), so its autograd
            # can name them; a read's or an iteration's (a DataLoader's batch, which
            # Laplace's fit differentiates with create_graph down to its own copies) and
            # any value outside a call: a request of their own
            joined = bool(self.open_calls) and (op == "call" or _holds_judge_leaf(result))
            self.request, self.grad_request = call_request if joined else ([], [])
            self.callback_value = joined
            answer = b"r" if op == "call" or not joined else b"j"
            try:
                if held is None:
                    value = self.dumps(result)
                else:
                    # with what the call did to its arguments (see _held_items) and what
                    # it recorded in the solution's library contexts
                    value = self.dumps((result, _changed_items(held), recorded()))
            finally:
                self.callback_value = False
            self._send(answer, value)
        except BoundaryError:
            raise
        except BaseException as exc:
            self._send(b"e", self.dumps(exception_record(exc)))

    def adopt_pushed(self, pushed, request):
        """What the solution did to its copies of this call's leaves (see
        SolutionLink.changed_leaves), copied into the judge's own before the callback
        runs, as the reply's in-place list is at the end of the call: only a leaf of the
        judge's this call sent, named by its index in the call's request."""
        if type(pushed) is not list or len(pushed) > len(request) or not all(
                type(item) is tuple and len(item) == 2 and type(item[0]) is int and
                0 <= item[0] < len(request) and isinstance(item[1], torch.Tensor)
                for item in pushed):
            raise self.violation("leaves of the wrong shape")
        for index, copy in pushed:
            target = request[index]
            if self.leaf_at.get((id(request), index)) is not target or \
                    not _judge_leaf(target):
                raise self.violation("a change to a tensor the call did not send as a leaf")
            _into_tensor(self, target, copy, {}, {}, {}, 0)
            self.leaf_seen(request, target)

    def leaf_seen(self, request, leaf):
        """The solution process's copy of this judge leaf is as the leaf is now (it pushed
        its change, or took the .grad a backward gave it): a read of the leaf again gives
        that copy (`sent_again`), one object as in one process."""
        key = (id(request), id(leaf))
        sent = self.leaves_sent.get(key)
        if sent is not None:
            self.leaves_sent[key] = (sent[0], _tensor_state(leaf))

    def runs_solution_code(self, value):
        """Whether calling (or using) `value` runs code of the solution process: a remote
        function, object or method, or an instance or stand-in of a solution class."""
        return isinstance(value, (RemoteFunction, RemoteObject, RemoteMethod, _BoundMethod,
                                  _UnboundMethod, _ClassFunction)) or \
            any(value is cls or isinstance(value, cls) for cls in self.standins.values())

    def wait_ready(self):
        if self.ready is None:
            started = time.monotonic()
            try:
                kind, payload = self._wait()
            finally:
                self.stats["ready_s"] = time.monotonic() - started
            if kind != b"I":
                raise self._unexpected(kind, payload)
            self.ready = self._loads(payload)
        return self.ready

    def call(self, target, self_obj, args, kwargs):
        top = not self.open_calls
        if top:
            self.arrays = {}
            self.leaves_sent, self.leaf_at = {}, {}
            self.tokens_now, self.unchanged_now = {}, set()
        self.open_calls += 1
        try:
            return self._call(target, self_obj, args, kwargs)
        finally:
            if top:
                self.keep_unchanged()
                self.fence = None
                if self.tensor_hooks:
                    self.remove_tensor_hooks()
            self.open_calls -= 1

    def _call(self, target, self_obj, args, kwargs):
        if self.decoding:
            # a message whose value is rebuilt by calling a function of the solution
            # process (a library's Cython reconstructor sent as a handle): the judge
            # never runs solution code to decode a value
            raise CannotCross("a value of type %s (rebuilt only by a function of the "
                              "solution process)" % _named(self_obj))
        if self.judging:
            raise self.cannot_cross("a comparison of a solution object whose library base "
                                    "asked the solution process (%s)" % _named(self_obj))
        self.wait_ready()
        self.stats["calls"] += 1
        if self.broken:
            raise BoundaryError(self.broken)
        left = self.left_behind.get(id(self_obj))
        if left is not None and left[0] is self_obj and self.open_calls == 1:
            raise self.ran_after_the_call(left[1])
        sent = (self_obj, tuple(args), dict(kwargs))
        # the solution's code the judge's objects hold before a call of the test's: what
        # they hold after it besides, the call left there (see _solution_code_inside)
        if self.open_calls == 1:
            self.fence = [sent, None]   # walked when solution code first arrives
        self.request, self.grad_request = [], []
        grad_enabled = torch.is_grad_enabled() if torch is not None else False
        try:
            around = ambient(self.base_env)
            around["rng"] = self._rng_for_call()
            if self.open_calls == 1:
                self.call_folders = call_files.call_folders(sent)
                if self.call_folders:
                    around["folders"] = self.call_folders
                    around["kept"] = [self.files.kept(f) for f in self.call_folders]
            if self.open_calls == 1:
                # the library stores the process keeps once (pyro's param store), in the
                # message of the arguments: a tensor both hold is one object there too
                held = stores.taken()
                if held:
                    around["stores"] = held
            graph = tf_graphs.default_graph()
            if graph is not None:   # the solution builds in its mirror of it
                around["tf_graph"] = graph
            self.requesting = True
            self.coupled = coupled_handles(sent)
            if self.open_calls == 1:
                self.handle_parts = (0, {})   # a test's model may have changed since
            try:
                payload = self.dumps((target, sent, grad_enabled, around))
            finally:
                self.requesting = False
                self.coupled = {}
        except BoundaryError:
            raise
        except CannotSend as exc:
            raise self.cannot_send(str(exc)) from None
        except Exception as exc:
            raise TypeError("an argument cannot be sent to the solution: %s: %s"
                            % (type(exc).__name__, exc)) from None
        request, grad_inputs = self.request, self.grad_request
        self._send(b"c", payload)
        kind, reply = self._wait()
        if kind not in (b"R", b"E"):
            raise self._unexpected(kind, reply)
        self._rng_after_call()
        call_id = 0
        body = reply
        if kind == b"R":
            call_id, body = _split_call_id(reply)
            if call_id is None:
                raise self.violation("a reply without its call")
        self.request, self.grad_request = request, grad_inputs
        self.current = {"request": request, "grad_inputs": grad_inputs if grad_enabled else [],
                        "grad_refs": _places_in(request, grad_inputs),
                        "call_id": call_id, "changed": {}}
        self.reading_reply = self.open_calls == 1
        try:
            decoded = self._loads(body)
            current = self.current
        finally:
            self.current = None
            self.reading_reply = False
        if not isinstance(decoded, tuple) or len(decoded) != 6:
            raise self.violation("a reply of the wrong shape")
        value, after, rebound, lent, changed_stores, in_place = decoded
        rebound = _paths(rebound)
        if rebound is None or not isinstance(lent, list) or not all(
                isinstance(item, tuple) and len(item) == 2 and type(item[0]) is int
                for item in lent) or type(in_place) is not list or not all(
                isinstance(t, torch.Tensor) for t in in_place) or \
                type(changed_stores) is not dict or \
                (changed_stores and self.open_calls != 1):
            raise self.violation("a reply of the wrong shape")
        # the judge's tensors the call changed in place (`changed_in_place`): adopted
        # with the arguments, into the judge's own (one that names no tensor of the
        # request, or that came back with a gradient path, `received_tensor`, is a new
        # value nothing holds: adopting it changes nothing); the library stores' changes
        # too, so a tensor of the store is the judge's own
        restored, lent, _, changed_stores = adopt_reply(
            self, sent, after, (value, lent, in_place, changed_stores), current["changed"],
            rebound)
        if changed_stores:
            self.adopt_stores(changed_stores)
        if lent and self.open_calls == 1:
            self.replace_lent(lent, self._fence_roots(sent))
        held = self.fence[1] if self.open_calls == 1 else None
        if held is not None:
            for key, (obj, where) in self._code_inside(sent).items():
                if key not in held:
                    self.left_behind[key] = (obj, where)
        self.issue_warnings()
        if kind == b"E":
            record = restored
            if not isinstance(record, tuple) or len(record) != 6:
                raise self.violation("an exception of the wrong shape")
            raise self.exception(*record)
        return restored

    def adopt_stores(self, changed):
        """What the top-level call set in or removed from the solution process's library
        stores (see curator.execution.stores), into the judge's: only the library's plain
        data (a tensor, a constraint of its own classes holding numbers and tensors);
        anything else refused before any change is applied."""
        try:
            stores.check(changed, self.runs_solution_code)
        except stores.StoreError as exc:
            raise self.violation(str(exc)) from None
        except stores.NotStoreData as exc:
            raise self.cannot_cross(str(exc)) from None
        stores.apply(changed)

    def replace_lent(self, lent, roots):
        """Where the judge's objects hold a handle of a closure the solution lent them
        (a forward hook registered through a callback on the test's own module), the
        closure the reply made from the judge's own code of that name, its cells adopted
        into the judge's objects (Laplace's hook fills the FeatureExtractor the test's
        Laplace object holds), as the same hook left on a module passed by value comes
        back. A handle whose code the judge does not have stays, and answers for nothing
        after the call (`ran_after_the_call`)."""
        swap = {}
        for handle, made in lent:
            old = self.handles.get(handle)
            if isinstance(old, RemoteFunction) and type(made) is types.FunctionType and \
                    self.made_closures.get(id(made)) is made:
                swap[id(old)] = (old, made)
        if swap:
            _replace_inside(roots, swap)

    def _fence_roots(self, sent):
        """Where the judge's objects a call may change are: its arguments, and the
        objects of the judge's the solution holds handles to (it may call them later)."""
        return [sent, list(self.judge_objects.values())]

    def _fence_before(self):
        fence = self.fence
        if fence is not None and fence[1] is None:
            fence[1] = self._code_inside(fence[0])

    def _code_inside(self, sent):
        """_solution_code_inside of a call's fence, timed."""
        walked = time.monotonic()
        try:
            return _solution_code_inside(self, self._fence_roots(sent))
        finally:
            self.stats["walk_s"] += time.monotonic() - walked

    def target(self, qualname):
        """A symbol of the candidate's module in the solution process (a dotted name)."""
        status, detail = self.wait_ready()
        if status != "ok":
            raise self.import_error(detail)
        return self.call(("modattr", qualname), None, (), {})

    def attribute(self, name):
        names = self.names()
        if name not in names:
            raise AttributeError("module 'solution' has no attribute %r" % name)
        return self.call(("modattr", name), None, (), {})

    def names(self):
        status, detail = self.wait_ready()
        if status != "ok":
            raise self.import_error(detail)
        return detail

    def import_error(self, record):
        try:
            module, qualname, args, message, text, original = record
        except (TypeError, ValueError):
            return ImportError("the solution did not import")
        last = text.strip().splitlines()[-1] if isinstance(text, str) and text.strip() \
            else "%s: %s" % (original, message)
        exc = ImportError("the solution did not import: %s" % last)
        exc.add_note(text if isinstance(text, str) else "")
        return exc


def _is_solution_code(obj):
    """A callable or object whose code runs in the solution process: a function or object
    handle, a solution class's standin, an instance of one (a mirror), a bound method."""
    if isinstance(obj, (RemoteFunction, RemoteObject, _BoundMethod, _UnboundMethod,
                        _ClassFunction)):
        return True
    cls = obj if isinstance(obj, type) else _TYPE(obj)
    try:
        return cls.__dict__.get("__curator_class__") is not None
    except Exception:
        return False


def _solution_code_inside(link, roots):
    """id -> (object, where) of the solution's code held inside the judge's own instances
    reachable from `roots` (through containers and instances' attributes, never into the
    solution's objects): a hook in a test's module's `_forward_hooks`, a solution module
    in its `_modules`. The judge's own methods call what they hold, so solution code left
    there would answer for the test's own computations after a call (`expected =
    model(x)` through a forward hook the solution registered: the wrong answer's double).
    Plain containers the test passed hold it in the open: only the test reads them."""
    found, seen, stack = {}, _SET(), [(root, None) for root in roots]
    while stack and _LEN(seen) < MAX_PLACES:
        obj, where = stack.pop()
        if obj is None or _IS_INSTANCE(obj, _ATOMS) or _ID(obj) in seen:
            continue
        seen.add(_ID(obj))
        if _is_solution_code(obj):
            if where is not None:
                found[_ID(obj)] = (obj, where)
            continue
        if (torch is not None and _IS_INSTANCE(obj, torch.Tensor)) or \
                (np is not None and _IS_INSTANCE(obj, np.ndarray)):
            continue
        if _IS_INSTANCE(obj, (list, tuple, set, frozenset, collections.deque)):
            stack.extend((v, where) for v in obj)
        elif _IS_INSTANCE(obj, _DICT):
            stack.extend((v, where) for v in dict.values(obj))
            if _IS_INSTANCE(obj, collections.defaultdict):
                stack.append((obj.default_factory, where))
        elif _TYPE(obj) is functools.partial:   # what it calls, with what
            stack.extend((v, where) for v in (obj.func, obj.args, obj.keywords))
        namespace = _namespace(obj)
        if namespace is not None:
            name = _TYPE(obj).__name__
            stack.extend((v, "%s (%s)" % (name, k)) for k, v in namespace.items())
    return found


def _replace_inside(roots, swap):
    """Put swap[id(old)][1] wherever the judge's containers and instances reachable from
    `roots` hold swap[id(old)][0] (the walk of _solution_code_inside)."""
    seen, stack = _SET(), list(roots)
    while stack and _LEN(seen) < MAX_PLACES:
        obj = stack.pop()
        if obj is None or _IS_INSTANCE(obj, _ATOMS) or _ID(obj) in seen or \
                _is_solution_code(obj):
            continue
        seen.add(_ID(obj))
        if (torch is not None and _IS_INSTANCE(obj, torch.Tensor)) or \
                (np is not None and _IS_INSTANCE(obj, np.ndarray)):
            continue
        if _IS_INSTANCE(obj, list):
            for index, value in _ENUMERATE(list(obj)):
                entry = swap.get(_ID(value))
                if entry is not None and entry[0] is value:
                    list.__setitem__(obj, index, entry[1])
            stack.extend(obj)
        elif _IS_INSTANCE(obj, (tuple, set, frozenset, collections.deque)):
            stack.extend(obj)
        elif _IS_INSTANCE(obj, _DICT):
            for key, value in list(dict.items(obj)):
                entry = swap.get(_ID(value))
                if entry is not None and entry[0] is value:
                    dict.__setitem__(obj, key, entry[1])
            stack.extend(dict.values(obj))
        namespace = _namespace(obj)
        if namespace is not None:
            for key, value in list(namespace.items()):
                entry = swap.get(_ID(value))
                if entry is not None and entry[0] is value:
                    namespace[key] = entry[1]
            stack.extend(namespace.values())


def _named(obj):
    name = getattr(obj, "__qualname__", None) if isinstance(obj, RemoteFunction) else None
    return name if isinstance(name, str) else "object"


def _places_in(request, grad_inputs):
    """The place in the request of each tensor of grad_inputs, which were registered in
    the request's order. A tensor may stand at two places (a parameter of the test's model
    sent with the call, and again in a callback's value that joined it: the operators
    pennylane's queue gives back), and each place is its own ref to the solution."""
    places, index = [], 0
    for tensor in grad_inputs:
        while index < len(request) and request[index] is not tensor:
            index += 1
        places.append(index if index < len(request) else _index_of(request, tensor))
        index += 1
    return places


def _index_of(items, obj):
    for index, item in enumerate(items):
        if item is obj:
            return index
    return None


def _split_call_id(reply):
    """A reply frame is the pickled call id followed by the pickled (result, arguments)."""
    buffer = io.BytesIO(reply)
    _DECODING[0] += 1
    try:
        call_id = JudgeUnpickler(buffer).load()
    except Exception:
        return None, b""
    finally:
        _DECODING[0] -= 1
    if not isinstance(call_id, int):
        return None, b""
    return call_id, reply[buffer.tell():]


# -- copy-back: the solution's view of the arguments into the judge's objects -----------------


# Pairing is by place: the object the solution holds at a place in the arguments after the
# call is the judge's object at that place, updated in place (a list it appended to, an
# attribute's dict it changed). A place the function bound to a new object instead
# (`self.kwargs = {**defaults, ...}`) is not paired: the judge's object there keeps its
# contents, as in-process, and the new one takes its place (cleanlab's CleanLearning
# rebinds a dict that is its __init__'s shared default; updating that default in place
# carried one test's confident joint into the next). The solution process says which
# places it rebound (`_rebound`), as data; saying so only ever leaves judge objects as
# they were.
PLACE_KEYS = (str, int, float, bytes, bool, type(None))
MAX_PLACES = 20000
# bound at import: the solution may rebind builtins (`builtins.float = ...`) before a reply
_ATOMS = (bool, int, float, complex, str, bytes)
_SEQUENCES, _DICT, _ID, _ENUMERATE, _LEN, _TYPE = (list, tuple), dict, id, enumerate, len, type
_SET, _IS_INSTANCE = set, isinstance


def _namespace(obj):
    """An instance's own attribute dict, read without running any of its code."""
    if _IS_INSTANCE(obj, (type, types.ModuleType, types.FunctionType, JudgeObject)):
        return None
    try:
        namespace = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        return None
    return namespace if _TYPE(namespace) is _DICT else None


def _placed(root, held_by_handle=None):
    """In the solution process: place -> object, for the containers and instances of the
    arguments as they arrived (tensors and arrays pair by their own references). An object
    `held_by_handle(obj)` says the other side holds as a handle is left out, with what it
    holds."""
    places, seen, stack = {}, _SET(), [(root, ())]
    while stack and _LEN(places) < MAX_PLACES:
        obj, place = stack.pop()
        if obj is None or _IS_INSTANCE(obj, _ATOMS) or _ID(obj) in seen or \
                _LEN(place) > 200 or \
                (torch is not None and _IS_INSTANCE(obj, torch.Tensor)) or \
                (np is not None and _IS_INSTANCE(obj, np.ndarray)) or \
                (held_by_handle is not None and held_by_handle(obj)):
            continue
        seen.add(_ID(obj))
        places[place] = obj
        if _IS_INSTANCE(obj, _SEQUENCES):
            stack.extend((v, place + (("i", i),)) for i, v in _ENUMERATE(obj))
        elif _IS_INSTANCE(obj, _DICT):
            stack.extend((v, place + (("k", k),)) for k, v in obj.items()
                         if _TYPE(k) in PLACE_KEYS)
        else:
            namespace = _namespace(obj)
            if namespace is not None:
                stack.append((namespace, place + (("d",),)))
    return places


# -- what a callback does to its arguments ---------------------------------------------------
# A judge function the solution calls (a forward hook of the test's analyzer on a layer of
# a model whose forward runs in the solution process) gets copies of its arguments: what
# it sets in them (sparseml's ModuleAnalyzer: the pre-hook sets `layer._analyzed_layer_desc`,
# the forward hook fills it in) goes back with its value, and the solution process sets
# it in its own arguments at the same places.


def _held_items(root, held_by_handle=None):
    """In the judge, before a callback: place -> (dict or list of its arguments, what it
    holds), for their containers and instances' attribute dicts (`_placed`). An argument
    that is the judge's own object the solution holds as a handle (`held_by_handle`: the
    test's own model) is left out with what it holds: the solution sees what the callback
    did to it through the handle, and what it binds there need not cross (ignite's traced
    model caches a `torch._C.ScriptMethod` in its attribute dict when called, and sending
    it failed the callback: 'cannot pickle')."""
    held = {}
    for place, obj in _placed(root, held_by_handle).items():
        if _TYPE(obj) is _DICT:
            held[place] = (obj, dict(obj))
        elif _TYPE(obj) is list:
            held[place] = (obj, list(obj))
    return held


def _changed_items(held):
    """[(place, key, value)]: what the callback bound anew in those dicts (the key) or
    lists (None: the whole list)."""
    changes = []
    for place, (obj, before) in held.items():
        if _TYPE(obj) is list:
            if _LEN(obj) != _LEN(before) or any(a is not b for a, b in zip(obj, before)):
                changes.append((place, None, list(obj)))
            continue
        for key, value in dict.items(obj):
            if _TYPE(key) in PLACE_KEYS and (key not in before or before[key] is not value):
                changes.append((place, key, value))
    return changes


def _apply_changes(root, changes):
    """In the solution process: a callback's changes set in its own arguments `root`
    (a place that is no longer a dict or list of the same kind is left alone)."""
    places = _placed(root)
    for change in changes:
        if type(change) is not tuple or len(change) != 3:
            raise NotData("a callback's change of the wrong shape")
        place, key, value = change
        target = places.get(place) if type(place) is tuple else None
        if key is None and type(target) is list and type(value) is list:
            target[:] = value
        elif type(target) is dict and type(key) in PLACE_KEYS:
            dict.__setitem__(target, key, value)


def _rebound(before, root):
    """The places of the arguments that hold another object after the call than before."""
    after = _placed(root)
    return [place for place, obj in after.items()
            if place in before and before[place] is not obj]


def _paths(value):
    """The rebound places a reply names, checked to be data; None if they are not."""
    if not isinstance(value, list) or len(value) > MAX_PLACES:
        return None
    out = set()
    for place in value:
        if not isinstance(place, tuple) or not all(
                isinstance(step, tuple) and step and step[0] in ("i", "k", "d")
                and all(type(part) in PLACE_KEYS for part in step) for step in place):
            return None
        out.add(place)
    return frozenset(out)


def _pair(orig, new, pairs, depth=0, place=(), rebound=frozenset()):
    """Pair the solution's objects after the call (`new`) with the judge's (`orig`) by
    place; `place` None: below a place that cannot be named (paired as before)."""
    if depth > MAX_DEPTH or id(new) in pairs or orig is new or _tf_element(new):
        return
    if place is not None and place in rebound:
        return
    if isinstance(new, MirrorState):
        pairs[id(new)] = orig
        state = getattr(orig, "__dict__", None)
        if isinstance(state, dict):
            _pair(state, new.state, pairs, depth + 1, _step(place, ("d",)), rebound)
        return
    if torch is not None and isinstance(new, torch.Tensor):
        return   # tensors pair through the reference they carry
    if type(orig) is not type(new):
        return
    pairs[id(new)] = orig
    if isinstance(new, (list, tuple)):
        for i, (a, b) in enumerate(zip(orig, new)):
            _pair(a, b, pairs, depth + 1, _step(place, ("i", i)), rebound)
    elif isinstance(new, dict):
        rest_orig = [k for k in orig if k not in new] if all(
            isinstance(k, (str, int, float, bytes, tuple, type(None))) for k in new) else \
            list(orig)
        rest_new = [k for k in new if k not in orig] if rest_orig is not list(orig) else \
            list(new)
        for key in new:
            if key in orig and isinstance(key, (str, int, float, bytes, tuple, type(None))):
                _pair(orig[key], new[key], pairs, depth + 1,
                      _step(place, ("k", key)) if type(key) in PLACE_KEYS else None,
                      rebound)
        if len(rest_orig) == len(rest_new):
            for a, b in zip(rest_orig, rest_new):
                _pair(a, b, pairs, depth + 1, None, rebound)
                _pair(orig[a], new[b], pairs, depth + 1, None, rebound)
    elif hasattr(new, "__dict__") and not isinstance(new, type) and \
            isinstance(getattr(orig, "__dict__", None), dict):
        _pair(orig.__dict__, new.__dict__, pairs, depth + 1, _step(place, ("d",)), rebound)


def _step(place, step):
    return None if place is None else place + (step,)


# How deep a reply is paired with the arguments and adopted (a level costs two or three of
# the interpreter's recursion: the limit is raised meanwhile, as for encoding).
MAX_DEPTH = 3000


def adopt_reply(link, sent, after, value, changed, rebound=frozenset()):
    limit = sys.getrecursionlimit()
    if limit < ENCODE_RECURSION_LIMIT:
        sys.setrecursionlimit(ENCODE_RECURSION_LIMIT)
    try:
        pairs = {}
        for new_id, (orig, new) in changed.items():
            pairs[new_id] = orig
        _pair(sent, after, pairs, rebound=rebound)
        done = {}
        _adopt(link, after, pairs, done, changed)
        return _adopt(link, value, pairs, done, changed)
    finally:
        sys.setrecursionlimit(limit)


def _adopt(link, new, pairs, done, changed, depth=0):
    key = id(new)
    if key in done:
        return done[key]
    if new is None or isinstance(new, (bool, int, float, complex, str, bytes)):
        return new
    if depth > MAX_DEPTH:
        # (returned as it was, a solution object deeper down would reach the test as the
        # decoder's MirrorState)
        raise link.cannot_cross("a value nested more than %d levels deep" % MAX_DEPTH)
    orig = pairs.get(key)
    if _tf_element(new):
        done[key] = new   # the judge's own graph, tensor, operation or variable
        return new
    if isinstance(new, MirrorState):
        target = orig if orig is not None and link.mirror_ids.get(id(orig)) in (
            None, new.handle) else link.mirrors.get(new.handle)
        if target is None:
            cls = link.standin(new.info)
            target = _blank(cls)
        link.mirrors[new.handle] = target
        link.mirror_ids[id(target)] = new.handle
        done[key] = target
        if target is orig:
            _class_made_in_place(link, orig, new.info)
        state = {k: _adopt(link, v, pairs, done, changed, depth + 1)
                 for k, v in new.state.items() if isinstance(k, str)}
        _no_method_replaced(link, target, state)
        try:
            namespace = object.__getattribute__(target, "__dict__")
            namespace.clear()
            namespace.update(state)
        except AttributeError:
            pass
        return target
    if torch is not None and isinstance(new, torch.Tensor):
        entry = changed.get(key)
        if entry is not None:
            target = entry[0]
            done[key] = target
            _into_tensor(link, target, new, pairs, done, changed, depth)
            return target
        done[key] = new
        return new
    if isinstance(new, list):
        target = orig if isinstance(orig, list) else new
        done[key] = target
        items = [_adopt(link, v, pairs, done, changed, depth + 1) for v in new]
        target[:] = items
        return target
    if isinstance(new, tuple):
        items = [_adopt(link, v, pairs, done, changed, depth + 1) for v in new]
        if all(a is b for a, b in zip(items, new)):
            result = new
        elif type(new) is tuple:
            result = tuple(items)
        elif hasattr(type(new), "_make"):
            result = type(new)._make(items)
        else:
            try:
                result = type(new)(items)
            except Exception:
                result = new
        done[key] = result
        return result
    if isinstance(new, dict):
        target = orig if isinstance(orig, dict) and type(orig) is type(new) else new
        done[key] = target
        items = [(_adopt(link, k, pairs, done, changed, depth + 1),
                  _adopt(link, v, pairs, done, changed, depth + 1)) for k, v in new.items()]
        if _holds(target, items):
            return target   # unchanged (and a mapping that refuses assignment stays whole)
        try:
            target.clear()
            for k, v in items:
                target[k] = v
        except TypeError:   # a dict subclass that refuses assignment (pennylane's PauliWord)
            dict.clear(target)
            for k, v in items:
                dict.__setitem__(target, k, v)
        return target
    if isinstance(new, (set, frozenset)):
        items = [_adopt(link, v, pairs, done, changed, depth + 1) for v in new]
        if isinstance(new, set):
            target = orig if isinstance(orig, set) else new
            done[key] = target
            target.clear()
            target.update(items)
            return target
        result = frozenset(items)
        done[key] = result
        return result
    if np is not None and type(new) is np.ndarray and type(orig) is np.ndarray and \
            orig.shape == new.shape and orig.dtype == new.dtype and orig.flags.writeable:
        # an array argument the function changed in place (one it left alone comes
        # back as the judge's own, _aref)
        np.copyto(orig, new)
        done[key] = orig
        return orig
    if torch is not None and isinstance(new, torch.Generator):
        if isinstance(orig, torch.Generator):
            orig.set_state(new.get_state())
            done[key] = orig
            return orig
        done[key] = new
        return new
    if type(new) is types.FunctionType and link.made_closures.get(key) is new:
        # a closure the reply made from the judge's code: its cells hold what the
        # solution's held, so the judge's own objects where they pair (the forward hook's
        # FeatureExtractor is the one the test's model holds)
        done[key] = new
        for cell in new.__closure__ or ():
            try:
                content = cell.cell_contents
            except ValueError:
                continue
            cell.cell_contents = _adopt(link, content, pairs, done, changed, depth + 1)
        return new
    if type(new) is types.MethodType and getattr(link, "judge_ids", {}).get(id(new)) is None \
            and getattr(link, "judge_ids", {}).get(id(new.__self__)) is None and \
            not (torch is not None and isinstance(new.__self__, torch.nn.Module)):
        # a library object's method the reply bound to an object it made (`_bm`): the
        # owner is adopted as any value; bound to a judge object it pairs with, never
        done[key] = new
        if _adopt(link, new.__self__, pairs, done, changed, depth + 1) is not new.__self__:
            raise link.cannot_cross("a method %s bound to an object the judge holds"
                                    % getattr(new.__func__, "__qualname__", "?"))
        return new
    if isinstance(new, JUDGE_OWN_TYPES) or _numba_dispatcher(new) or \
            isinstance(new, enum.Enum):
        # the judge's own, named by the reply (a library's module or compiled function):
        # never walked nor rewritten (a numba dispatcher holds the compiler's state, weak
        # proxies among it: umap's second nearest_neighbors call was a ReferenceError)
        done[key] = new
        return new
    namespace = getattr(new, "__dict__", None)
    if isinstance(namespace, dict) and not isinstance(new, (type, RemoteFunction,
                                                            RemoteObject)):
        target = orig if orig is not None and type(orig) is type(new) and \
            not _state_outside_dict(type(new)) else new
        if target is new:
            _no_method_replaced(link, new, namespace)
        done[key] = target
        state = {k: _adopt(link, v, pairs, done, changed, depth + 1)
                 for k, v in list(namespace.items())}
        target_ns = target.__dict__
        if target is orig:
            state = _settable_part(target, target_ns, state)
        target_ns.clear()
        target_ns.update(state)
        return target
    done[key] = new
    return new


JUDGE_OWN_TYPES = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                   # made here new by `_sy`: their state is this process's own
                   threading.Condition, threading.Event)


@functools.lru_cache(maxsize=1024)
def _state_outside_dict(cls):
    """Whether instances of `cls` keep state beside their `__dict__`: in `__slots__`, or in
    the fields of a compiled base class (pandas' BlockManager holds its blocks and axes in
    its Cython base, its `__dict__` is empty). Such a judge object cannot be brought up to
    date by its `__dict__`: the object the reply rebuilt takes its place where the judge's
    containers and instances held it (a DataFrame the function added a column to keeps its
    identity and gets the new manager; before, it kept the old one and lost the column)."""
    for klass in cls.__mro__:
        if klass is object:
            continue
        if not klass.__flags__ & _HEAPTYPE and klass.__basicsize__ > object.__basicsize__:
            return True
        slots = klass.__dict__.get("__slots__", ())
        if isinstance(slots, str):
            slots = (slots,)
        if any(name not in ("__dict__", "__weakref__") for name in slots):
            return True
    return False


def _never(value):
    return False


def _settable_part(target, before, state):
    """A judge object's attributes as the solution left them, except a dunder, what its
    class defines as a method or descriptor, or a function it held itself
    (`_check_writable`): there the judge's own stays. A judge object passed by value (a
    test's nn.Module) comes back with the solution's changes, and `model.parameters =
    lambda: iter(())` made the test's own `model.parameters()` the solution's answer.
    `agent.t = t` still lands, and so does a new attribute holding a function (a fitted
    estimator's metric: a library function the solution process serves)."""
    kept = {}
    for key, value in state.items():
        old = before.get(key, _MISSING)
        if value is not old and type(key) is str:
            try:
                _check_writable(target, key, value, _never)
            except AttributeError:
                if old is not _MISSING:
                    kept[key] = old
                continue
        kept[key] = value
    for key, old in before.items():   # deleted: a function or dunder of its own stays
        if key not in state and (type(key) is not str or key.startswith("__") or
                                  isinstance(old, FUNCTION_TYPES)):
            kept[key] = old
    return kept


def _same(a, b):
    return a is b or (type(a) is type(b) and
                      isinstance(a, (bool, int, float, complex, str, bytes)) and a == b)


def _holds(mapping, items):
    """Whether `mapping` holds exactly `items` ((key, value) pairs, in order) already."""
    if len(mapping) != len(items):
        return False
    return all(_same(k, tk) and _same(v, tv)
               for (k, v), (tk, tv) in zip(items, dict.items(mapping)))


def _blank(cls):
    for klass in cls.__mro__[1:]:
        if klass is not object:
            try:
                return klass.__new__(cls)
            except TypeError:
                continue
    return object.__new__(cls)


def _into_tensor(link, target, new, pairs, done, changed, depth):
    """Copy what the solution did to a judge tensor into it (values, grad, requires_grad)."""
    if _uninitialized(new):
        return   # a lazy module's parameter the call left as it was
    if _uninitialized(target):
        # the call's forward made it (a LazyLinear inside a mirror): made here the same
        target.materialize(tuple(new.shape), dtype=new.dtype)
    with torch.no_grad():
        same_layout = target.shape == new.shape and target.dtype == new.dtype
        if not same_layout:
            target.data = new.detach()
        elif not _same_values(target, new):
            try:
                target.copy_(new.detach())
            except RuntimeError:
                target.data = new.detach().clone()
    grad = new.grad
    if grad is None:
        if target.grad is not None and target.is_leaf:
            target.grad = None
    else:
        grad = _adopt(link, grad, pairs, done, changed, depth + 1)
        if grad is not target.grad:
            try:
                target.grad = grad.detach()
            except RuntimeError:
                pass
    if target.is_leaf and target.requires_grad != new.requires_grad:
        try:
            target.requires_grad_(new.requires_grad)
        except RuntimeError:
            pass


def _same_values(a, b):
    try:
        if a.is_floating_point() or a.is_complex():
            return bool(((a == b) | (a.isnan() & b.isnan())).all())
        return bool(torch.equal(a, b))
    except RuntimeError:
        return False


# -- judge-side proxies ----------------------------------------------------------------------


class RemoteFunction:
    """A solution function (or other callable), called in the solution process."""

    def __init__(self, link, handle, info):
        self._link = link
        self._handle = handle
        self.__name__ = str(info.get("name", "function"))
        self.__qualname__ = str(info.get("qualname", "function"))
        self.__doc__ = info.get("doc")

    def __call__(self, *args, **kwargs):
        return self._link.call(("call", None), self, args, kwargs)

    def __repr__(self):
        return "<solution function %s>" % self.__qualname__


class RemoteObject:
    """An object of the solution process that has no data form (an iterator, a generator)."""

    __slots__ = ("_link", "_handle")

    def __init__(self, link, handle):
        object.__setattr__(self, "_link", link)
        object.__setattr__(self, "_handle", handle)

    def _op(self, op, name=None, args=()):
        return object.__getattribute__(self, "_link").call((op, name), self, args, {})

    def __call__(self, *args, **kwargs):
        return object.__getattribute__(self, "_link").call(("call", None), self, args, kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._op("getattr", name)

    def __iter__(self):
        return self._op("dunder", "__iter__")

    def __next__(self):
        return self._op("dunder", "__next__")

    def __len__(self):
        return self._op("dunder", "__len__")

    def __bool__(self):
        return self._op("dunder", "__bool__")

    def __getitem__(self, key):
        return self._op("dunder", "__getitem__", (key,))

    def __repr__(self):
        return "<solution object>"


class RemoteMethod:
    """A method of a solution class: runs in the solution process on the mirror's state."""

    def __init__(self, name):
        self.name = name

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return _UnboundMethod(self.name)
        return _BoundMethod(obj, self.name)


class _BoundMethod:
    __slots__ = ("obj", "name")

    def __init__(self, obj, name):
        self.obj, self.name = obj, name

    def __call__(self, *args, **kwargs):
        return _LINK[0].call(("method", self.name), self.obj, args, kwargs)

    @property
    def __self__(self):
        return self.obj

    @property
    def __name__(self):
        return self.name


def _remote_exit(self, exc_type, exc, tb):
    """`with` a solution's context manager: its __exit__ runs in the solution process
    (without the judge's traceback) and may swallow what the block raised, except the
    judge's own verdicts: a failed assertion, pytest's outcomes, the boundary's errors
    (anything not an Exception or an AssertionError) always go on."""
    if exc_type is not None and not _sendable_exception(exc_type):
        # the judge's own exception classes (pytest's outcomes) as their nearest base
        base = next((k for k in exc_type.__mro__ if _sendable_exception(k)), BaseException)
        try:
            exc = base(*[a for a in getattr(exc, "args", ()) if type(a) in (str, int, float)])
        except Exception:
            exc = None
        exc_type = base
    suppress = _LINK[0].call(("method", "__exit__"), self, (exc_type, exc, None), {})
    if exc_type is None or not issubclass(exc_type, Exception) or \
            issubclass(exc_type, AssertionError) or _judge_outcome(exc_type):
        return False
    return bool(suppress)


def _sendable_exception(cls):
    """An exception class the solution process has by the same name (pytest's outcomes
    call themselves builtins.Failed: not one)."""
    if cls.__module__ == "builtins":
        return getattr(builtins, cls.__name__, None) is cls
    return allowed_class(cls) and not _solution_defined(cls)


def _judge_outcome(exc_type):
    module = getattr(exc_type, "__module__", "") or ""
    return module.split(".")[0] in ("_pytest", "pytest", "unittest") or \
        exc_type.__name__ in ("Failed", "OutcomeException")


class _UnboundMethod:
    def __init__(self, name):
        self.name = name
        self.__name__ = name

    def __call__(self, obj, *args, **kwargs):
        return _LINK[0].call(("method", self.name), obj, args, kwargs)


class _ClassFunction:
    def __init__(self, link, handle, name):
        self.link, self.handle, self.name = link, handle, name

    def __get__(self, obj, owner=None):
        return self

    def __call__(self, *args, **kwargs):
        cls = self.link.standins[self.handle]
        return self.link.call(("method", self.name), cls, args, kwargs)


class _RemoteClassAttribute:
    """A class attribute of a solution class (an enum's member, a tensor of constants),
    read from the solution's class when asked; an instance's own attribute of that name
    comes first (a non-data descriptor)."""

    def __init__(self, link, handle, name):
        self.link, self.handle, self.name = link, handle, name

    def __get__(self, obj, owner=None):
        cls = self.link.standins[self.handle]
        return self.link.call(("getattr", self.name), cls, (), {})


def _remote_property(name):
    def getter(self):
        return _LINK[0].call(("getattr", name), self, (), {})

    def setter(self, value):
        _LINK[0].call(("setattr", name), self, (value,), {})

    return property(getter, setter)


class SolutionModule(types.ModuleType):
    """The `solution` module the tests import, in the judge: a proxy for the real one."""

    def __init__(self, link, path):
        super().__init__("solution")
        object.__setattr__(self, "_curator_link", link)
        self.__file__ = path
        link.proxy_module = self

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        link = object.__getattribute__(self, "_curator_link")
        value = link.attribute(name)
        setattr(self, name, value)
        return value

    def __dir__(self):
        link = object.__getattribute__(self, "_curator_link")
        return sorted(link.names())


class RepositoryTargets:
    """In the judge of a repository run: the target symbols of the repository's module
    are proxies for the candidate in the solution process.

    The judge imports the repository's own module; right after it runs (or at once, when
    it is already imported) each target is replaced by its proxy, so every later
    `from module import name` gets the proxy. Modules that took the name earlier (a
    circular import, a registry) are rebound when collection ends and before each test.
    A pytest plugin too: it waits for the candidate's import and reports when it failed.
    """

    def __init__(self, link, module_name, qualnames, report=None, whole=None):
        self.link = link
        self.module_name = module_name
        self.qualnames = [q for q in dict.fromkeys(qualnames or ()) if q]
        self.report = report or (lambda event, **data: None)
        self.whole = whole      # a module the repository does not have: all of it a proxy
        self.proxies = {}       # id(original) -> (original, proxy)
        self.installed = False
        self._modules = 0

    # -- installing
    def start(self):
        if self.whole is not None:
            sys.meta_path.insert(0, self)
            return
        module = sys.modules.get(self.module_name)
        if module is not None:
            self.install(module)
        else:
            sys.meta_path.insert(0, self)

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.module_name or self.installed:
            return None
        if self.whole is not None:
            import importlib.machinery

            return importlib.machinery.ModuleSpec(fullname, _ProxyLoader(self),
                                                  origin=self.whole)
        spec = _spec_of_others(self, fullname, path, target)
        if spec is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _AfterRunLoader(spec.loader, self.install)
        return spec

    def install(self, module):
        if self.installed:
            return
        self.installed = True
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for qualname in self.qualnames:
            parts = qualname.split(".")
            owner = module
            for part in parts[:-1]:
                owner = getattr(owner, part, None)
            name = parts[-1]
            owner = _source_class(owner, name, module, parts[:-1])
            space = getattr(owner, "__dict__", None)
            if owner is None or not isinstance(space, collections.abc.Mapping) or \
                    name not in space:
                continue   # the candidate's own new name: nothing of the judge's to replace
            raw = space[name]
            proxy = self._proxy(qualname, raw)
            if proxy is None:
                continue
            setattr(owner, name, proxy)
            original = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
            made = proxy.__func__ if isinstance(proxy, (staticmethod, classmethod)) else proxy
            self.proxies[id(original)] = (original, made)
        self.rebind()

    def _proxy(self, qualname, raw):
        link = self.link
        if isinstance(raw, type):
            return link.target(qualname)   # a class: its stand-in, made now
        if isinstance(raw, (staticmethod, classmethod)):
            # the solution's own attribute is already bound to its class
            return staticmethod(_function_proxy(link, qualname, raw.__func__))
        if isinstance(raw, property):
            # not callable, so never a proxy below: each accessor the repository's class
            # has runs the candidate's (`Class.name.fget` in the solution process)
            accessors = {part: _function_proxy(link, "%s.%s" % (qualname, part),
                                               getattr(raw, part))
                         for part in ("fget", "fset", "fdel")
                         if getattr(raw, part) is not None}
            return property(doc=raw.__doc__, **accessors)
        if isinstance(raw, (types.FunctionType, types.BuiltinFunctionType)) or \
                callable(raw):
            return _function_proxy(link, qualname, raw)
        return None

    def rebind(self):
        """Every module global that still holds an original target gets its proxy."""
        if not self.proxies or len(sys.modules) == self._modules:
            return
        self._modules = len(sys.modules)
        proxies = self.proxies
        for module in list(sys.modules.values()):
            try:
                space = module.__dict__
            except Exception:
                continue
            if not isinstance(space, dict):
                continue
            for key, value in list(space.items()):
                entry = proxies.get(id(value))
                if entry is not None and entry[0] is value:
                    space[key] = entry[1]

    def install_late(self):
        """Installs on the module when it was imported past this finder (a finder some
        plugin put ahead of it after `keep_ahead`): the names modules took from it are
        rebound."""
        if not self.installed and self.whole is None:
            module = sys.modules.get(self.module_name)
            if module is not None:
                self.install(module)

    # -- pytest hooks
    def pytest_load_initial_conftests(self, early_config):
        # pytest's assertion-rewriting import hook has just gone first on sys.meta_path;
        # no conftest has been imported yet
        keep_ahead([self, *_MODULE_VALUES])

    def pytest_plugin_registered(self, plugin, manager):
        if isinstance(plugin, types.ModuleType):
            judge_only(plugin)    # a conftest

    def pytest_itemcollected(self, item):
        judge_only(getattr(item, "module", None))

    def pytest_collection_finish(self, session):
        self.install_late()
        self.rebind()
        status, detail = self.link.wait_ready()
        if status != "ok":
            error = self.link.import_error(detail)
            self.report("collect_error", id=self.module_name,
                        message=str(error)[:500], text=str(error)[:4000])

    def pytest_runtest_setup(self, item):
        self.install_late()
        self.rebind()


def keep_ahead(finders):
    """Puts the judge's import finders (`RepositoryTargets`, `ModuleValues`) back first on
    sys.meta_path, in their order. pytest puts its assertion-rewriting hook first when it
    starts, and that hook loads the modules it rewrites itself (test modules, and helpers
    a conftest registers with `pytest.register_assert_rewrite`: nncf's tests/torch/
    helpers.py): a target in such a module was never made a proxy, and the tests ran the
    repository's own function whatever the candidate was. Ahead of it, each finder takes
    the hook's spec and wraps its loader (`_spec_of_others`), so the module is still
    rewritten."""
    present = [f for f in finders if any(f is other for other in sys.meta_path)]
    if not present:
        return
    rest = [f for f in sys.meta_path if not any(f is mine for mine in present)]
    sys.meta_path[:] = [*present, *rest]


def _source_class(owner, name, module, path):
    """The class the module's source names `path` that defines `name` itself. A class
    decorator that returns a subclass of the class it decorates (small-text's
    `@constraints`, made with functools.wraps) leaves the subclass at the module's name
    and the method on the class it wraps: the proxy goes there, where the subclass and
    every caller find it (it went nowhere, and the tests ran the repository's own method
    whatever the candidate was)."""
    space = getattr(owner, "__dict__", None)
    if not isinstance(owner, type) or (isinstance(space, collections.abc.Mapping) and
                                       name in space):
        return owner
    qualname, module_name = ".".join(path), getattr(module, "__name__", None)
    for klass in owner.__mro__[1:]:
        if klass.__qualname__ == qualname and klass.__module__ == module_name and \
                name in klass.__dict__:
            return klass
    return owner


class _ProxyLoader:
    """Loads a module the candidate added as a proxy module for the solution process's."""

    def __init__(self, targets):
        self._targets = targets

    def create_module(self, spec):
        targets = self._targets
        targets.installed = True
        module = SolutionModule(targets.link, targets.whole)
        module.__name__ = spec.name
        return module

    def exec_module(self, module):
        pass


def _spec_of_others(finder, fullname, path, target):
    """The spec the meta-path finders other than `finder` give for a module, or None."""
    for other in list(sys.meta_path):
        find = getattr(other, "find_spec", None)
        if other is finder or find is None:
            continue
        spec = find(fullname, path, target)
        if spec is not None:
            return spec
    return None


class _AfterRunLoader:
    """The module's own loader; after the module ran, `after(module)`: its targets become
    proxies (`RepositoryTargets.install`), its plain values are taken (`ModuleValues`)."""

    def __init__(self, loader, after):
        self._loader = loader
        self._after = after

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._after(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


def _function_proxy(link, qualname, original):
    remote = []

    def resolve():
        if not remote:
            remote.append(link.target(qualname))
        return remote[0]

    def proxy(*args, **kwargs):
        return resolve()(*args, **kwargs)

    proxy.__curator_remote__ = resolve

    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        try:
            setattr(proxy, attr, getattr(original, attr))
        except (AttributeError, TypeError):
            pass
    try:
        import inspect

        proxy.__signature__ = inspect.signature(original)
    except (TypeError, ValueError):
        pass
    proxy.__curator_target__ = qualname
    if torch is not None:
        try:
            # TorchScript compiling judge code that calls the target leaves the call to
            # Python (as for @torch.jit.ignore), typed by the original's signature
            from torch._jit_internal import FunctionModifiers

            proxy._torchscript_modifier = FunctionModifiers.IGNORE
        except Exception:
            pass
    return _eager(proxy)


def remote_target(obj):
    """The solution-process callable behind a target proxy of the judge, or None."""
    if isinstance(obj, RemoteFunction):
        return obj
    resolve = getattr(obj, "__dict__", {}).get("__curator_remote__") \
        if isinstance(getattr(obj, "__dict__", None), dict) else None
    return resolve() if callable(resolve) else None


def _has_proxied_method(obj):
    if torch is None or not isinstance(obj, torch.nn.Module):
        return False
    for klass in type(obj).__mro__:
        for value in vars(klass).values():
            value = getattr(value, "__func__", value)
            space = getattr(value, "__dict__", None)
            if isinstance(space, dict) and "__curator_remote__" in space:
                return True
    return False


def install_patch_forwarding():
    """In the judge: a test's mock.patch of an attribute of a module or a class the
    solution process has too is applied there as well for as long as it lasts (the new
    value crosses as usual: a mock is a handle, so its calls are recorded in the judge)."""
    from unittest import mock

    patcher = getattr(mock, "_patch", None)
    if patcher is None or getattr(patcher, "__curator_forwarding__", False):
        return
    enter, exit_ = patcher.__enter__, patcher.__exit__

    def __enter__(self):
        result = enter(self)
        _forward_patch(self, "patch")
        return result

    def __exit__(self, *exc_info):
        _forward_patch(self, "unpatch")
        return exit_(self, *exc_info)

    patcher.__enter__, patcher.__exit__ = __enter__, __exit__
    patcher.__curator_forwarding__ = True
    _forward_monkeypatch()


def _forward_monkeypatch():
    """pytest's monkeypatch.setattr the same way, undone at the fixture's teardown."""
    monkeypatch = sys.modules.get("_pytest.monkeypatch")
    cls = getattr(monkeypatch, "MonkeyPatch", None)
    if cls is None or getattr(cls, "__curator_forwarding__", False):
        return
    setattr_, undo = cls.setattr, cls.undo

    def forwarding_setattr(self, *args, **kwargs):
        before = len(self._setattr)
        result = setattr_(self, *args, **kwargs)
        for target, name, _old in self._setattr[before:]:
            _forward_patch(types.SimpleNamespace(target=target, attribute=name), "patch")
        return result

    def forwarding_undo(self):
        for target, name, _old in reversed(self._setattr):
            _forward_patch(types.SimpleNamespace(target=target, attribute=name), "unpatch")
        return undo(self)

    cls.setattr, cls.undo = forwarding_setattr, forwarding_undo
    cls.__curator_forwarding__ = True


def _forward_patch(patch, op):
    link = _LINK[0]
    target = getattr(patch, "target", None)
    attribute = getattr(patch, "attribute", None)
    if link is None or not isinstance(attribute, str):
        return
    if isinstance(target, types.ModuleType):
        module_name, path = target.__name__, ""
    elif isinstance(target, type):
        module_name, path = target.__module__, target.__qualname__
        if "<" in path:
            return
    else:
        return   # an instance: it crosses as data with the mock in its attributes
    module = sys.modules.get(module_name)
    if module is None or not (module is link.proxy_module or _shared_module(module)):
        return
    args = (module_name, path, attribute)
    if op == "patch":
        value = target.__dict__.get(attribute) if isinstance(target, type) else \
            getattr(target, attribute, None)
        args += (getattr(target, attribute, None),
                 isinstance(target, type) and isinstance(value, types.FunctionType))
    try:
        link.call((op, None), None, args, {})
    except Exception:
        pass   # the judge's own patch stands; what the solution does with it is its own


def install_readable_tmp():
    """In the judge: the folders pytest makes for the tests (tmp_path) are readable by the
    solution process, which runs under another uid, so a test that writes a file and
    hands the candidate its path (kornia's load_image) works as upstream. Readable, not
    writable: what the test keeps there (an expected output) the candidate cannot
    change."""
    try:
        import _pytest.tmpdir as tmpdir
    except Exception:
        return
    factory = tmpdir.TempPathFactory
    if getattr(factory, "__curator_readable__", False):
        return
    getbasetemp, mktemp = factory.getbasetemp, factory.mktemp

    def readable_basetemp(self):
        path = getbasetemp(self)
        for folder in (path, path.parent):
            _chmod(folder, 0o711)       # traversed, never listed or written
        return path

    def readable_mktemp(self, basename, numbered=True):
        path = mktemp(self, basename, numbered)
        _chmod(path, 0o755)
        call_files.opened(path)   # what a call writes there comes back (`call_files`)
        return path

    factory.getbasetemp, factory.mktemp = readable_basetemp, readable_mktemp
    factory.__curator_readable__ = True
    # The same for the folders tests make themselves (`tempfile.TemporaryDirectory()`,
    # stanza's char model tests: mkdtemp makes them 0700): readable, not writable.
    if not getattr(tempfile.mkdtemp, "__curator_readable__", False):
        mkdtemp = tempfile.mkdtemp

        def readable_mkdtemp(*args, **kwargs):
            path = mkdtemp(*args, **kwargs)
            _chmod(path, 0o755)
            call_files.opened(path)
            return path

        readable_mkdtemp.__curator_readable__ = True
        tempfile.mkdtemp = readable_mkdtemp


def _chmod(path, mode):
    try:
        os.chmod(path, mode)
    except OSError:
        pass


def install_jit_forwarding():
    """In the judge: torch.jit.script / trace of a target compile the candidate in the
    solution process (TorchScript cannot compile a proxy); anything else, as torch does."""
    if torch is None or getattr(torch.jit, "__curator_forwarding__", False):
        return
    for name in JIT_COMPILERS:
        real = getattr(torch.jit, name, None)
        if real is None:
            continue
        setattr(torch.jit, name, _forwarding(name, real))
    torch.jit.__curator_forwarding__ = True


def _forwarding(name, real):
    import functools

    def frames_up(args, kwargs):
        if name == "script" and len(args) < 2 and "_rcb" not in kwargs:
            # a class is compiled with names resolved in the frame `_frames_up` above
            # script's caller: this wrapper is one frame more (torch.distributed.optim's
            # `@torch.jit.script class _FunctionalAdadelta` names a module function)
            return {**kwargs, "_frames_up": kwargs.get("_frames_up", 0) + 1}
        return kwargs

    @functools.wraps(real)
    def compile_(obj, *args, **kwargs):
        if "_rcb" in kwargs:
            # TorchScript compiling judge code that calls the target: the proxy cannot
            # become part of a judge-side graph (a known limit), and the judge's
            # resolution callback means nothing in the solution process
            return real(obj, *args, **kwargs)
        remote = remote_target(obj)
        if remote is None and _has_proxied_method(obj):
            remote = obj   # a module whose method is the target: it crosses as data and
            # is compiled there with the candidate's method
        if remote is None:
            return real(obj, *args, **frames_up(args, kwargs))
        link = _LINK[0]
        return link.call(("jit", name), remote, args, kwargs)

    return compile_


def _eager(function):
    """`function` run outside any graph torch.compile traces (a call that crosses the
    boundary is a graph break, never traced)."""
    if torch is None:
        return function
    try:
        import importlib

        return importlib.import_module("torch._dynamo").disable(function)
    except Exception:
        return function


# The top-level package of the module a repository run patches (the repository's own):
# set in the judge by `configure_repository`.
# Its target module and the top-level names the candidate text defines there (None:
# every name of that module), which never cross by name (`_repository_function`).
REPOSITORY = {"root": None, "module": None, "names": None}
MAX_MADE_BASES = 8
_MADE_IN_PLACE = {}   # (bases, name) -> the judge's class made of them (one per judge)


def configure_repository(root, module=None, names=None):
    """The judge's repository package (`_class_made_in_place` takes its classes only,
    `_repository_function` its functions), the patched module and the names the
    candidate text defines in it (None: all of them)."""
    REPOSITORY["root"] = root if isinstance(root, str) and root.isidentifier() else None
    REPOSITORY["module"] = module if isinstance(module, str) else None
    REPOSITORY["names"] = frozenset(names) if names is not None else None


def _class_made_in_place(link, obj, info):
    """A test's object whose class a call changed in place to a class made at run time of
    a class of the repository's package and the object's own class (nncf's
    create_nncf_network: `model.__class__ = ` a new class of NNCFNetwork and the model's
    class, so `model.nncf` exists; the judge kept the model's class and the test's next
    line was "object has no attribute 'nncf'") gets the same class, made by the judge of
    its own definitions: the bases a class description names (`class_info`), resolved
    by the judge's modules (`_resolve`: never a solution's class, nor a name the
    candidate defines), the object's own class last, the others of the repository's own
    package (`REPOSITORY`: no library's class put before the test's own, torch's
    Identity making its forward return its input), no class made at run time among them.
    What the class made at run time holds itself (a method the call set on it) is not
    taken: the judge's class holds nothing of its own. Anything else leaves the object's
    class as it was, as before (a class a message names never replaces a judge object's:
    its methods would run the solution's code). The run records it (`note`)."""
    bases = info.get("bases") if type(info) is dict else None
    root = REPOSITORY["root"]
    if root is None or type(bases) is not list or not 2 <= len(bases) <= MAX_MADE_BASES:
        return
    current = type(obj)
    resolved = []
    for item in bases:
        if type(item) not in (list, tuple) or len(item) != 2 or \
                not all(type(part) is str for part in item):
            return
        try:
            base = _resolve(item[0], item[1])
        except NotData:
            return
        if not isinstance(base, type) or base in resolved:
            return
        resolved.append(base)
    if resolved[-1] is not current:
        return
    for base in resolved[:-1]:
        if _root(base.__module__) != root or made_at_run_time(base) or \
                denied_class(base) or not base.__flags__ & _HEAPTYPE:
            return
    name = info.get("name")
    name = name if type(name) is str and name.isidentifier() else current.__name__
    key = (tuple(resolved), name)
    made = _MADE_IN_PLACE.get(key)
    if made is None:
        try:
            made = types.new_class(name, key[0])
        except Exception:   # noqa: BLE001 - bases that do not combine: left as it was
            return
        made.__module__ = current.__module__
        made.__qualname__ = current.__qualname__
        _MADE_IN_PLACE[key] = made
    try:
        object.__setattr__(obj, "__class__", made)
    except TypeError:   # another layout
        return
    link.note("a %s.%s the call changed in place to a class made at run time, made by the "
              "judge of its own %s" % (current.__module__, current.__qualname__, ", ".join(
                  "%s.%s" % (b.__module__, b.__qualname__) for b in key[0])))


def configure_allowed(extra):
    """Allow classes of these top-level packages too (a repository's own, say)."""
    for name in extra or ():
        if name and name.isidentifier():
            ALLOWED_ROOTS.add(name)


def describe_boundary(kind):
    return json.dumps({"boundary": kind})
