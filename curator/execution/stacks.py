"""Library state kept on a per-process stack, carried across a callback.

Some libraries record what code does while one of their contexts is open: pennylane's
`QNode.construct` opens an `AnnotatedQueue` (pushed on `QueuingManager._active_contexts`)
and every operator made while it is open appends itself to the innermost queue. When the
solution process holds such a context open and calls a judge handle (the test's quantum
function), the callback runs in the judge, whose stack is empty: the operators queue
nowhere and the solution's tape comes out empty (pennylane's `_coefficients_no_filter`,
`TorchLayer.forward`).

Each *stack context* here is an adapter in the judge's trusted code, named in a small
registry (`CONTEXTS`):
- `active()`, in the solution process before it calls a judge handle: the data that
  describes its open context, or None when none is open;
- `check(data)`, in the judge: refuses data of the wrong shape before anything runs;
- `installed(data)`, in the judge around that callback only: a context manager that opens
  the judge's own context of the library (made by the judge from the library's classes,
  never from the message) and yields a function giving what was recorded in it, as data;
- `replay(recorded, sent)`, in the solution process: puts what the judge recorded into
  its real open context (`sent`: what `active` gave), as if the callee had run there.

A message names adapters only by their registry key and carries nothing the judge runs:
an unknown key or data of the wrong shape is refused (`StackError`), and what the judge
records is the test's own objects, sent back as any value of a callback is.

A context whose data cannot cross (a pyro messenger holding an open file) goes as
`withheld(reason)` instead: the callee runs under the adapter's `refusing(reason)`, which
records nothing and fails only a callee that uses the library (its `pyro.sample` would
have reached the solution's handlers), so a callback that does not use it (the test's
plain function called inside a `poutine.trace`) runs as in-process.
"""

from __future__ import annotations

import contextlib
import sys


class StackError(ValueError):
    """A message's stack contexts name an unknown adapter or carry the wrong data."""


WITHHELD = "withheld"


def withheld(reason):
    """The data of a context that could not cross (see the module's docstring)."""
    return (WITHHELD, str(reason)[:500])


def _is_withheld(data):
    return type(data) is tuple and len(data) == 2 and data[0] == WITHHELD and \
        type(data[1]) is str


class PennylaneQueue:
    """pennylane's queuing: `QueuingManager` keeps a class-level list of open
    `AnnotatedQueue`s and appends to the innermost. The judge opens a fresh queue of its
    own for the callback; what was queued in it (each object and its annotation, in
    order) is appended to the solution's innermost queue. Known limit: an object the
    solution queued before the call and the callee removes from the queue (an observable
    wrapped by a measurement made in the callee) stays in the solution's queue."""

    name = "pennylane.queue"
    module = "pennylane.queuing"

    def _manager(self):
        return getattr(sys.modules.get(self.module), "QueuingManager", None)

    def active(self):
        manager = self._manager()
        recording = getattr(manager, "recording", None)
        if recording is None:
            return None
        try:
            return () if recording() else None
        except Exception:   # a library version without it: nothing to carry
            return None

    def check(self, data):
        if data != ():
            raise StackError("pennylane's queue carries no data")

    @contextlib.contextmanager
    def installed(self, data):
        queue_class = getattr(sys.modules.get(self.module), "AnnotatedQueue", None)
        if queue_class is None:   # the judge has no queuing of its own: nothing to record
            yield tuple
            return
        with queue_class() as queue:
            yield lambda: tuple((obj, dict(info)) for obj, info in queue.items())

    @contextlib.contextmanager
    def refusing(self, reason):   # its data is (): it always crosses
        yield lambda: None

    def replay(self, recorded, sent):
        if type(recorded) is not tuple or any(
                type(item) is not tuple or len(item) != 2 or type(item[1]) is not dict or
                any(type(key) is not str for key in item[1]) for item in recorded):
            raise StackError("pennylane's queue came back in the wrong shape")
        manager = self._manager()
        for obj, info in recorded:
            manager.append(obj, **info)


class PyroStack:
    """pyro's effect handlers: `pyro.poutine.runtime._PYRO_STACK` lists the open
    messengers (a trace, a replay of the guide's trace, a plate), and `pyro.sample` in
    the callee hands its message to each. The solution's messengers go as values (pyro's
    own classes: the judge refuses anything that is not a Messenger of its pyro) and
    are pushed on the judge's stack above whatever the judge holds open itself (SVI's
    param capture around the target), with the plates' dimensions they hold allocated;
    afterwards each copy's state goes back and becomes its original's (the trace's new
    nodes, a plate's counter)."""

    name = "pyro.stack"
    module = "pyro.poutine.runtime"

    def _runtime(self):
        return sys.modules.get(self.module)

    def active(self):
        stack = getattr(self._runtime(), "_PYRO_STACK", None)
        if type(stack) is not list or not stack:
            return None
        dims = getattr(getattr(self._runtime(), "_DIM_ALLOCATOR", None), "_stack", None)
        return (list(stack), list(dims) if type(dims) is list else [])

    def check(self, data):
        base = getattr(sys.modules.get("pyro.poutine.messenger"), "Messenger", None)
        if type(data) is not tuple or len(data) != 2 or type(data[0]) is not list or \
                not data[0] or type(data[1]) is not list or base is None or \
                not all(isinstance(m, base) for m in data[0]) or \
                not all(name is None or type(name) is str for name in data[1]):
            raise StackError("pyro's stack carries its messengers and plate dimensions")

    @contextlib.contextmanager
    def installed(self, data):
        runtime = self._runtime()
        stack, allocator = runtime._PYRO_STACK, runtime._DIM_ALLOCATOR
        messengers, dims = data
        depth, held = len(stack), list(allocator._stack)
        # the plates the solution holds open keep their dimensions here too, so the
        # callee's own plates take others, as in-process
        merged = list(held) + [None] * max(0, len(dims) - len(held))
        for place, name in enumerate(dims):
            if name is not None and merged[place] is None:
                merged[place] = name
        allocator._stack[:] = merged
        taken = [_taken(vars(m), STATE_DEPTH) for m in messengers]
        stack.extend(messengers)
        try:
            # what the callee changed in each copy's state, not the state: a trace's
            # sites the solution sent stay the solution's own objects (sent back whole,
            # each tensor of them that requires grad came back as a new copy of a judge
            # leaf, three more in every step of pyro's GP `train`, and RWS's traces
            # crossed twice per callback)
            yield lambda: [_diff(before, vars(m)) for m, before in zip(messengers, taken)]
        finally:
            del stack[depth:]
            allocator._stack[:] = held

    @contextlib.contextmanager
    def refusing(self, reason):
        """A messenger of the judge's pyro on top of its stack that fails any message
        (a sample, a param) with the reason the solution's could not cross."""
        base = getattr(sys.modules.get("pyro.poutine.messenger"), "Messenger", None)
        if base is None:
            yield lambda: None
            return
        message = "pyro handlers the solution process holds open could not cross to " \
            "the test's function: %s" % str(reason)[:500]

        class NotCarried(base):
            def __init__(self):
                pass

            def _process_message(self, msg):
                raise RuntimeError(message)

            def _postprocess_message(self, msg):
                pass

        stack = self._runtime()._PYRO_STACK
        depth = len(stack)
        stack.append(NotCarried())
        try:
            yield lambda: None
        finally:
            del stack[depth:]

    def replay(self, recorded, sent):
        messengers = sent[0]
        if type(recorded) is not list or len(recorded) != len(messengers) or any(
                change is not None and not _well_formed(change, STATE_DEPTH) or
                change is not None and any(type(k) is not str for k in change[0])
                for change in recorded):
            raise StackError("pyro's stack came back in the wrong shape")
        for messenger, change in zip(messengers, recorded):
            if change is not None:
                _apply(vars(messenger), change)


# How deep a pyro messenger's state is compared (`_taken`): its attributes, the state of
# an object among them (a Trace), the dicts that holds (its nodes). Below that, a value
# the callee replaced is sent whole; one changed in place there is not seen.
STATE_DEPTH = 3
_PLAIN = (bool, int, float, complex, str, bytes, type(None))


def _taken(mapping, depth):
    """A dict's items as they are now, and below each the same of a dict it holds, or of
    an object's state (`__dict__`), `depth` levels down."""
    return {key: (value, _below(value, depth - 1)) for key, value in mapping.items()}


def _below(value, depth):
    if depth <= 0 or type(value) in _PLAIN:
        return None
    if isinstance(value, dict):
        return _taken(value, depth)
    state = getattr(value, "__dict__", None)
    if type(state) is dict and not _is_tensor(value):
        return ("vars", _taken(state, depth))
    return None


def _is_tensor(value):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _diff(taken, mapping):
    """What changed in `mapping` since `taken`: (items set or replaced, keys removed,
    {key: the change below}), or None."""
    changed, inner = {}, {}
    for key, value in mapping.items():
        before = taken.get(key)
        if before is None or (before[0] is not value and not (
                type(value) in _PLAIN and type(before[0]) is type(value) and
                before[0] == value)):
            changed[key] = value
        elif before[1] is not None:
            below = _diff(before[1][1], vars(value)) if type(before[1]) is tuple else \
                _diff(before[1], value)
            if below is not None:
                inner[key] = ("vars", below) if type(before[1]) is tuple else below
    removed = [key for key in taken if key not in mapping]
    return (changed, removed, inner) if changed or removed or inner else None


def _well_formed(change, depth):
    if type(change) is not tuple or len(change) != 3 or type(change[0]) is not dict or \
            type(change[1]) is not list or type(change[2]) is not dict or \
            (change[2] and depth <= 1):
        return False
    return all(_well_formed(below[1] if type(below) is tuple and len(below) == 2 and
                            below[0] == "vars" else below, depth - 1)
               for below in change[2].values())


def _apply(target, change):
    """In the solution process: a change `_diff` found, onto the original's dict."""
    changed, removed, inner = change
    for key in removed:
        target.pop(key, None)
    target.update(changed)
    for key, below in inner.items():
        value = target.get(key)
        if type(below) is tuple and len(below) == 2 and below[0] == "vars":
            state = getattr(value, "__dict__", None)
            if type(state) is not dict:
                raise StackError("pyro's stack came back naming state its messenger lacks")
            _apply(state, below[1])
        elif isinstance(value, dict):
            _apply(value, below)
        else:
            raise StackError("pyro's stack came back naming state its messenger lacks")


CONTEXTS = {adapter.name: adapter for adapter in (PennylaneQueue(), PyroStack())}


def active():
    """In the solution process: {name: data} of the stack contexts open now."""
    found = {}
    for name, adapter in CONTEXTS.items():
        data = adapter.active()
        if data is not None:
            found[name] = data
    return found


def installed(contexts):
    """In the judge, around one callback: the judge's own context of each adapter the
    message names (checked here, before anything runs). Entered, it gives a function
    returning {name: recorded} once the callback ran."""
    if type(contexts) is not dict or any(name not in CONTEXTS for name in contexts):
        raise StackError("stack contexts the boundary does not know")
    for name, data in contexts.items():
        if not _is_withheld(data):
            CONTEXTS[name].check(data)
    return _installed(contexts)


@contextlib.contextmanager
def _installed(contexts):
    with contextlib.ExitStack() as stack:
        taken = {name: stack.enter_context(
                     CONTEXTS[name].refusing(data[1]) if _is_withheld(data)
                     else CONTEXTS[name].installed(data))
                 for name, data in contexts.items()}
        yield lambda: {name: take() for name, take in taken.items()}


def replay(recorded, sent):
    """In the solution process: what the judge recorded, into this process's open
    contexts; only the adapters this process sent (`sent`) may come back."""
    if type(recorded) is not dict or any(name not in sent for name in recorded):
        raise StackError("stack contexts the call did not carry")
    for name, items in recorded.items():
        if _is_withheld(sent[name]):
            if items is not None:
                raise StackError("a context the call withheld came back with records")
            continue
        CONTEXTS[name].replay(items, sent[name])
