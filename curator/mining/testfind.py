"""Which tests exercise which functions: test modules -> pytest node ids -> references.

A test module is read statically. For every test function (`test*` at module level, or in
a `Test*` / `*TestCase` class) we collect the names it uses once resolved through the
module's imports (`from pkg.mod import f`, `import pkg.mod as m`, function-local imports,
star imports), including calls through instances (`layer = Layer(); layer(x)` uses
`Layer.__call__` / `Layer.forward`; `Layer().f()` uses `Layer.f`), through helper
functions and fixtures of the same module, and through `self.x` set in setUp. The result
is a set of absolute dotted references per node id; the indexer maps them to candidates.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from curator.mining.modules import ModuleInfo, dotted, import_bindings

SETUP_METHODS = {"setUp", "setup_method", "setUpClass", "setup_class", "setup",
                 "asyncSetUp", "setup_class_method"}
# Calls that return the same object (model.eval(), Layer().to(device) ...).
SELF_RETURNING = {"to", "eval", "train", "cuda", "cpu", "double", "float", "half",
                  "requires_grad_", "type"}


def is_test_module(path: str) -> bool:
    name = PurePosixPath(path).name
    return (name.startswith("test_") or name.endswith("_test.py")) and name.endswith(".py")


def in_test_folder(path: str) -> bool:
    parts = PurePosixPath(path).parts[:-1]
    return any(p in ("tests", "test", "testing") for p in parts)


@dataclass
class FoundTest:
    node_id: str
    refs: set[str]


@dataclass
class _Use:
    refs: set[str] = field(default_factory=set)
    local_calls: set[str] = field(default_factory=set)   # module-level functions used
    self_calls: set[str] = field(default_factory=set)    # self.method used


class _Analyser(ast.NodeVisitor):
    def __init__(self, bindings: dict[str, str], stars: list[str], instances: dict[str, str],
                 self_attrs: dict[str, str], module_funcs: set[str], package: str):
        self.bindings = dict(bindings)
        self.stars = stars
        self.instances = dict(instances)
        self.self_attrs = self_attrs
        self.module_funcs = module_funcs
        self.package = package
        self.use = _Use()

    # -- name resolution -----------------------------------------------------

    def ref_of(self, node: ast.AST) -> str | None:
        """The absolute dotted name an expression denotes, when it is an imported name."""
        chain = dotted(node)
        if chain is None:
            return None
        root, _, rest = chain.partition(".")
        if root in self.bindings:
            target = self.bindings[root]
            return f"{target}.{rest}" if rest else target
        if root == "self" and rest:
            attr, _, more = rest.partition(".")
            if attr in self.self_attrs:
                return f"{self.self_attrs[attr]}.{more}" if more else None
            return None
        if self.stars and root not in self.instances and root not in self.module_funcs:
            return f"{self.stars[0]}.{chain}"  # `from m import *`: most likely from there
        return None

    def instance_of(self, node: ast.AST) -> str | None:
        """The class an expression is an instance of: `C(...)`, `C(...).to(d)`, a variable."""
        while (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr in SELF_RETURNING):
            node = node.func.value
        if isinstance(node, ast.Call):
            return self.ref_of(node.func)
        if isinstance(node, ast.Name):
            return self.instances.get(node.id)
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id == "self"):
            return self.self_attrs.get(node.attr)
        return None

    # -- visiting --------------------------------------------------------------

    def visit_Import(self, node) -> None:
        found, stars = import_bindings(node, self.package)
        for binding in found:
            self.bindings[binding.name] = binding.target
        self.stars = self.stars + stars

    visit_ImportFrom = visit_Import

    def visit_Assign(self, node: ast.Assign) -> None:
        cls = self.instance_of(node.value)
        if cls:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    self.instances[target.id] = cls
        self.generic_visit(node)

    def visit_withitem(self, node: ast.withitem) -> None:
        cls = self.instance_of(node.context_expr)
        if cls and isinstance(node.optional_vars, ast.Name):
            self.instances[node.optional_vars.id] = cls
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if not isinstance(node.ctx, ast.Load):
            return
        name = node.id
        if name in self.bindings:
            self.use.refs.add(self.bindings[name])
        elif name in self.module_funcs:
            self.use.local_calls.add(name)
        elif self.stars and name not in self.instances:
            for star in self.stars:
                self.use.refs.add(f"{star}.{name}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain = dotted(node)
        if chain is None:
            self.generic_visit(node)
            return
        root, _, rest = chain.partition(".")
        first = rest.split(".", 1)[0]
        ref = self.ref_of(node)
        if ref:
            self.use.refs.add(ref)
        elif root in self.instances:
            self.use.refs.add(f"{self.instances[root]}.{first}")
        elif root == "self":
            if first in self.self_attrs:
                more = rest.split(".")
                if len(more) > 1:
                    self.use.refs.add(f"{self.self_attrs[first]}.{more[1]}")
            else:
                self.use.self_calls.add(first)
        elif root in self.module_funcs:
            self.use.local_calls.add(root)
        elif self.stars:
            self.visit_Name(ast.Name(id=root, ctx=ast.Load()))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        cls = None
        if isinstance(func, ast.Name) and func.id in self.instances:
            cls = self.instances[func.id]
        elif isinstance(func, ast.Call):
            cls = self.instance_of(func)
        elif (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
              and func.value.id == "self" and func.attr in self.self_attrs):
            cls = self.self_attrs[func.attr]
        if cls:
            self.use.refs.add(f"{cls}.__call__")
            self.use.refs.add(f"{cls}.forward")
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
            owner = self.instance_of(func.value)
            if owner:
                self.use.refs.add(f"{owner}.{func.attr}")
        self.generic_visit(node)

    def visit_FunctionDef(self, node) -> None:
        for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
            if arg.arg in self.module_funcs:  # a fixture defined in this module
                self.use.local_calls.add(arg.arg)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef


def _self_attrs(cls: ast.ClassDef, analyser_for) -> dict[str, str]:
    """`self.x = C(...)` anywhere in the class -> {x: C}."""
    found: dict[str, str] = {}
    probe = analyser_for({})
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign):
            owner = probe.instance_of(node.value)
            if not owner:
                continue
            for target in node.targets:
                if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id in ("self", "cls")):
                    found[target.attr] = owner
    return found


def _is_test_class(cls: ast.ClassDef) -> bool:
    if cls.name.startswith("Test"):
        return True
    return any((dotted(b) or "").split(".")[-1].endswith("TestCase") for b in cls.bases)


def find_tests(module: ModuleInfo) -> list[FoundTest]:
    """Every test in a test module with the absolute names it uses."""
    tree = module.tree
    bindings = {name: b.target for name, b in module.bindings.items()}
    module_funcs = {s.name: s for s in tree.body
                    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    classes = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef)}
    package = module.package

    def analyser_for(self_attrs: dict[str, str], instances=None) -> _Analyser:
        return _Analyser(bindings, module.stars, instances or {}, self_attrs,
                         set(module_funcs), package)

    # Module-level instances: MODEL = Model() at import time.
    module_instances: dict[str, str] = {}
    probe = analyser_for({})
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            owner = probe.instance_of(stmt.value)
            if owner:
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        module_instances[target.id] = owner

    uses: dict[tuple[str, ...], _Use] = {}

    def analyse(key: tuple[str, ...], node, self_attrs) -> _Use:
        analyser = analyser_for(self_attrs, module_instances)
        analyser.visit(node)
        uses[key] = analyser.use
        return analyser.use

    for name, node in module_funcs.items():
        analyse((name,), node, {})

    tests: list[FoundTest] = []

    def closure(key: tuple[str, ...], methods: dict[str, tuple[str, ...]]) -> set[str]:
        refs: set[str] = set()
        seen: set[tuple[str, ...]] = set()
        stack = [key]
        while stack:
            current = stack.pop()
            if current in seen or current not in uses:
                continue
            seen.add(current)
            use = uses[current]
            refs |= use.refs
            stack.extend((name,) for name in use.local_calls)
            stack.extend(methods[name] for name in use.self_calls if name in methods)
        return refs

    def class_methods(cls: ast.ClassDef, depth: int = 0) -> dict[str, ast.AST]:
        """Methods of a class including those inherited from classes in this module."""
        found: dict[str, ast.AST] = {}
        if depth < 5:
            for base in cls.bases:
                name = dotted(base)
                if name in classes and classes[name] is not cls:
                    found.update(class_methods(classes[name], depth + 1))
        for item in cls.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[item.name] = item
        return found

    def visit_class(cls: ast.ClassDef, outer: tuple[str, ...]) -> None:
        path = (*outer, cls.name)
        if not _is_test_class(cls):
            return
        self_attrs = _self_attrs(cls, analyser_for)
        for base in cls.bases:
            name = dotted(base)
            if name in classes and classes[name] is not cls:
                self_attrs = {**_self_attrs(classes[name], analyser_for), **self_attrs}
        methods = class_methods(cls)
        keys = {name: (*path, name) for name in methods}
        for name, node in methods.items():
            analyse(keys[name], node, self_attrs)
        setups = [keys[n] for n in SETUP_METHODS if n in keys]
        for name in sorted(methods):
            if not name.startswith("test"):
                continue
            refs = closure(keys[name], keys)
            for setup in setups:
                refs |= closure(setup, keys)
            tests.append(FoundTest(f"{module.path}::{'::'.join(keys[name])}", refs))
        for item in cls.body:
            if isinstance(item, ast.ClassDef):
                visit_class(item, path)

    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                stmt.name.startswith("test"):
            tests.append(FoundTest(f"{module.path}::{stmt.name}",
                                   closure((stmt.name,), {})))
        elif isinstance(stmt, ast.ClassDef):
            visit_class(stmt, ())
    return tests
