"""Library state kept once per process (a library's global store), kept in step across
the boundary with each top-level call, both ways.

pyro keeps its parameters in one `ParamStoreDict` per process (`pyro.get_param_store()`,
`pyro.poutine.runtime._PYRO_PARAM_STORE`): `pyro.param` registers and reads there, and a
`PyroModule` (a GP model) puts each of its parameters there under its full name and takes
the store's tensor in place of its own when the two differ. Across the boundary there
are two stores, the judge's and the solution process's: pyro's conftest clears the
judge's before each test while the solution's kept the last test's parameters (a later
GP model of the same names took them in the solution process: order-dependent
failures), and a parameter the candidate registered was not the judge's when the test
read it (or the reverse).

So each top-level call carries the judge's store (`taken`, with the call's arguments, in
the same message: a tensor both hold is one object there too, as in one process) and the
solution process makes its store exactly that (`put`); its reply carries what the call
set in its store and what it removed (`changes`, relative to what it was given), and the
judge applies that to its own store (`apply`), so what a callback of the call did to the
judge's store meanwhile (the test's guide registering its parameters) stays. The values
cross as any value of a call does: the store's tensors are tensors of the request (a
change the call made to one comes back into the judge's own tensor, and an unchanged one
is the judge's own), a new one is a new tensor of the judge's.

Each adapter (registry `STORES`) is trusted code of the judge's:
- `take()`: the store's entries as data, (name, tensor, constraint) in order, or None
  when the library is not loaded in this process;
- `put(entries)`, in the solution process: the store holds exactly those;
- `changes(given)`, in the solution process after the call: (set, removed) relative to
  what `put` gave it;
- `check(changes, runs_solution_code)`, in the judge: refuses data of the wrong shape
  (`StoreError`, tampering) and what is not plain data of the library
  (`NotStoreData`: a constraint of the solution's own class, or one holding a solution
  object, which the judge would run when the test reads the parameter);
- `apply(changes)`, in the judge.
"""

from __future__ import annotations

import sys


class StoreError(ValueError):
    """A message's store changes name an unknown store or have the wrong shape."""


class NotStoreData(ValueError):
    """A store change holds what is not the library's plain data (see the docstring)."""


MAX_ENTRIES = 100000
MAX_DEPTH = 8   # of a constraint's fields (an independent of a stack of intervals)


def _torch():
    return sys.modules.get("torch")


class PyroParamStore:
    """pyro's `ParamStoreDict`: `_params` (name -> unconstrained tensor),
    `_param_to_name` (its inverse) and `_constraints` (name -> constraint)."""

    name = "pyro.params"
    module = "pyro.poutine.runtime"

    def _store(self):
        store = getattr(sys.modules.get(self.module), "_PYRO_PARAM_STORE", None)
        if store is None or not all(type(getattr(store, field, None)) is dict for field in (
                "_params", "_param_to_name", "_constraints")):
            return None
        return store

    def _real(self):
        constraints = sys.modules.get("torch.distributions.constraints")
        return getattr(constraints, "real", None)

    def take(self):
        store = self._store()
        if store is None:
            return None
        real = self._real()
        return [(name, value, store._constraints.get(name, real))
                for name, value in store._params.items()]

    def put(self, entries):
        store = self._store()
        if store is None or type(entries) is not list:
            return None
        params, constraints = store._params, store._constraints
        if len(params) == len(entries) and all(
                params.get(name) is value and constraints.get(name) is constraint
                for name, value, constraint in entries):
            return {name: (value, constraint) for name, value, constraint in entries}
        params.clear()
        store._param_to_name.clear()
        constraints.clear()
        for name, value, constraint in entries:
            params[name] = value
            store._param_to_name[value] = name
            constraints[name] = constraint
        return {name: (value, constraint) for name, value, constraint in entries}

    def changes(self, given):
        store = self._store()
        if store is None:
            return None
        real = self._real()
        given = given or {}
        now = []
        for name, value in store._params.items():
            constraint = store._constraints.get(name, real)
            before = given.get(name)
            if before is None or before[0] is not value or before[1] is not constraint:
                now.append((name, value, constraint))
        removed = [name for name in given if name not in store._params]
        return (now, removed) if now or removed else None

    def check(self, changes, runs_solution_code):
        torch = _torch()
        base = getattr(sys.modules.get("torch.distributions.constraints"), "Constraint",
                       None)
        if type(changes) is not tuple or len(changes) != 2 or \
                type(changes[0]) is not list or type(changes[1]) is not list or \
                len(changes[0]) + len(changes[1]) > MAX_ENTRIES or \
                any(type(name) is not str for name in changes[1]) or \
                any(type(item) is not tuple or len(item) != 3 or type(item[0]) is not str
                    for item in changes[0]):
            raise StoreError("pyro's param store came back in the wrong shape")
        if torch is None or base is None:
            raise StoreError("pyro's param store changed where the judge has no pyro")
        for name, value, constraint in changes[0]:
            if not isinstance(value, torch.Tensor):
                raise StoreError("pyro's param store came back with a %s as parameter %r"
                                 % (type(value).__name__, name[:200]))
            if not _plain_constraint(constraint, base, torch, runs_solution_code, 0):
                raise NotStoreData("the constraint of parameter %r in pyro's param store "
                                   "(a %s)" % (name[:200], type(constraint).__name__))

    def apply(self, changes):
        store = self._store()
        if store is None:
            return
        entries, removed = changes
        params, inverse, constraints = store._params, store._param_to_name, \
            store._constraints
        for name in removed:
            old = params.pop(name, None)
            if old is not None:
                inverse.pop(old, None)
            constraints.pop(name, None)
        for name, value, constraint in entries:
            old = params.get(name)
            if old is not None and old is not value:
                inverse.pop(old, None)
            params[name] = value
            inverse[value] = name
            constraints[name] = constraint


def _plain_constraint(constraint, base, torch, runs_solution_code, depth):
    """A constraint of the library (torch's or pyro's class, never a stand-in of the
    solution's) whose fields are plain data: numbers, strings, tensors, sizes, other
    such constraints, and tuples or lists of them."""
    if depth > MAX_DEPTH or not isinstance(constraint, base) or \
            runs_solution_code(constraint) or \
            any("__curator_class__" in vars(cls) for cls in type(constraint).__mro__):
        return False
    fields = getattr(constraint, "__dict__", {})
    return type(fields) is dict and all(
        type(key) is str and _plain_field(value, base, torch, runs_solution_code, depth + 1)
        for key, value in fields.items())


def _plain_field(value, base, torch, runs_solution_code, depth):
    if value is None or type(value) in (bool, int, float, complex, str):
        return True
    if type(value) in (torch.Tensor, torch.Size):
        return True
    if type(value) in (tuple, list):
        return depth <= MAX_DEPTH and all(
            _plain_field(v, base, torch, runs_solution_code, depth + 1) for v in value)
    return _plain_constraint(value, base, torch, runs_solution_code, depth)


STORES = {adapter.name: adapter for adapter in (PyroParamStore(),)}

# In the solution process: {store name: {name: (value, constraint)}} as the current
# top-level call's `put` left it
_GIVEN = {}


def taken():
    """In the judge, for a top-level call: {store name: entries} of the stores loaded."""
    found = {}
    for name, adapter in STORES.items():
        entries = adapter.take()
        if entries is not None:
            found[name] = entries
    return found


def put(stores):
    """In the solution process at a top-level call: each store as the judge has it."""
    _GIVEN.clear()
    if type(stores) is not dict:
        return
    for name, entries in stores.items():
        adapter = STORES.get(name)
        if adapter is None:
            continue
        given = adapter.put(entries)
        if given is not None:
            _GIVEN[name] = given


def changes():
    """In the solution process, replying to a top-level call: {store name: changes}."""
    found = {}
    for name, adapter in STORES.items():
        if name not in _GIVEN:
            continue
        change = adapter.changes(_GIVEN[name])
        if change is not None:
            found[name] = change
    return found


def check(found, runs_solution_code):
    """In the judge: the reply's store changes, refused before any is applied."""
    if type(found) is not dict or any(name not in STORES for name in found):
        raise StoreError("store changes the boundary does not know")
    for name, change in found.items():
        STORES[name].check(change, runs_solution_code)


def apply(found):
    for name, change in found.items():
        STORES[name].apply(change)
