"""One Python module parsed with `ast`: its imports, definitions and candidate functions."""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass, field
from functools import cached_property

_LINE_END = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")

# Methods worth a problem of their own; other dunders are plumbing.
KEPT_DUNDERS = {"__call__", "__init__"}


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split exactly where Python's tokenizer counts lines."""
    lines = _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def dotted_path(path: str) -> str:
    """`src/pkg/mod.py` -> `src.pkg.mod`; `pkg/__init__.py` -> `pkg`."""
    parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_of(path: str) -> str:
    """The dotted package a module's relative imports are resolved against."""
    parts = path.split("/")[:-1]
    return ".".join(parts)


def resolve_relative(package: str, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    parts = package.split(".") if package else []
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    if module:
        parts.append(module)
    return ".".join(p for p in parts if p)


@dataclass(frozen=True)
class Binding:
    """What an import binds a local name to: `target` is the dotted absolute name."""

    name: str
    target: str
    statement: ast.stmt = field(compare=False, hash=False, repr=False)
    alias: ast.alias = field(compare=False, hash=False, repr=False)
    module_import: bool = False  # `import a.b [as c]` rather than `from a import b`


def import_bindings(stmt: ast.Import | ast.ImportFrom, package: str) -> tuple[list[Binding],
                                                                               list[str]]:
    """Bindings made by one import statement, and star-imported module names."""
    bindings, stars = [], []
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname:
                bindings.append(Binding(alias.asname, alias.name, stmt, alias, True))
            else:
                root = alias.name.split(".")[0]
                bindings.append(Binding(root, root, stmt, alias, True))
        return bindings, stars
    base = resolve_relative(package, stmt.level, stmt.module)
    for alias in stmt.names:
        if alias.name == "*":
            stars.append(base)
            continue
        target = f"{base}.{alias.name}" if base else alias.name
        bindings.append(Binding(alias.asname or alias.name, target, stmt, alias))
    return bindings, stars


def top_level_statements(body: list[ast.stmt]):
    """Statements run at import time: into if/try/with blocks, never into defs or classes."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.Try, ast.With, ast.AsyncWith)) or (
                hasattr(ast, "TryStar") and isinstance(stmt, ast.TryStar)):
            for block in ("body", "orelse", "finalbody"):
                yield from top_level_statements(getattr(stmt, block, []) or [])
            for handler in getattr(stmt, "handlers", []) or []:
                yield from top_level_statements(handler.body)


@dataclass
class References:
    """Names a function uses: free names, dotted chains, calls, method names called."""

    names: set[str] = field(default_factory=set)        # free names loaded
    chains: set[str] = field(default_factory=set)       # a.b.c rooted at a free name
    calls: set[str] = field(default_factory=set)        # dotted callee (rooted anywhere)
    method_calls: set[str] = field(default_factory=set)  # .attr(...) on any object
    bound: set[str] = field(default_factory=set)        # names bound inside


class _Collector(ast.NodeVisitor):
    def __init__(self):
        self.refs = References()

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.refs.names.add(node.id)
        else:
            self.refs.bound.add(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain = dotted(node)
        if chain is not None:
            if isinstance(node.ctx, ast.Load):
                self.refs.names.add(chain.split(".", 1)[0])
                self.refs.chains.add(chain)
            return
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        chain = dotted(node.func)
        if chain is not None:
            self.refs.calls.add(chain)
        if isinstance(node.func, ast.Attribute):
            self.refs.method_calls.add(node.func.attr)
        self.generic_visit(node)

    def _bind_args(self, args: ast.arguments) -> None:
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            self.refs.bound.add(arg.arg)
        for arg in (args.vararg, args.kwarg):
            if arg is not None:
                self.refs.bound.add(arg.arg)

    def visit_FunctionDef(self, node) -> None:
        self.refs.bound.add(node.name)
        self._bind_args(node.args)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._bind_args(node.args)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.refs.bound.add(node.name)
        self.generic_visit(node)

    def visit_Import(self, node) -> None:
        for alias in node.names:
            self.refs.bound.add((alias.asname or alias.name).split(".")[0])

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.refs.bound.add(node.name)
        self.generic_visit(node)

    def visit_Global(self, node) -> None:
        return

    visit_Nonlocal = visit_Global


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for an attribute chain rooted at a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def collect_references(node: ast.AST) -> References:
    collector = _Collector()
    collector.visit(node)
    refs = collector.refs
    refs.names -= refs.bound
    refs.chains = {c for c in refs.chains if c.split(".", 1)[0] not in refs.bound}
    return refs


def ast_hash(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """Hash of the normalised AST: no positions, comments, formatting or docstring."""
    body = node.body
    if ast.get_docstring(node, clean=False) is not None:
        body = body[1:]
    digest = hashlib.sha1()
    digest.update(type(node).__name__.encode())
    digest.update(node.name.encode())
    for part in (node.args, node.returns, *node.decorator_list, *body):
        digest.update(b"\0")
        if part is not None:
            digest.update(ast.dump(part, annotate_fields=False).encode())
    return digest.hexdigest()


def signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    text = f"{prefix} {node.name}({ast.unparse(node.args)})"
    if node.returns is not None:
        text += f" -> {ast.unparse(node.returns)}"
    return text + ":"


def is_trivial(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A stub: only a docstring, pass, ... or raise NotImplementedError."""
    body = node.body
    if ast.get_docstring(node, clean=False) is not None:
        body = body[1:]
    if not body:
        return True
    if len(body) > 1:
        return False
    stmt = body[0]
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True
    if isinstance(stmt, ast.Raise) and stmt.exc is not None:
        exc = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def start_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])


def dedent_block(lines: list[str], columns: int) -> str:
    """Remove exactly `columns` leading spaces where present (string bodies stay intact)."""
    if columns <= 0:
        return "".join(lines)
    prefix_chars = " \t"
    out = []
    for line in lines:
        head = line[:columns]
        out.append(line[columns:] if head and all(c in prefix_chars for c in head) else line)
    return "".join(out)


class FunctionInfo:
    """One candidate definition. Only the hash is computed up front; the rest on demand,
    since most functions of a repository are never kept (no test exercises them).

    `release()` drops the syntax tree to save memory; anything asked for afterwards is
    recomputed from a fresh parse of the module text.
    """

    def __init__(self, module: ModuleInfo, node, cls: ast.ClassDef | None):
        self.module = module
        self._node = node
        self._cls = cls
        self.name: str = node.name
        self.class_name: str | None = cls.name if cls else None
        self.qualname = f"{cls.name}.{node.name}" if cls else node.name
        self.start = start_line(node)
        self.end = node.end_lineno or node.lineno
        self.ast_hash = ast_hash(node)
        # What it calls and names, for the call graph (filled by `index_calls`).
        self.calls: frozenset[str] = frozenset()
        self.names: frozenset[str] = frozenset()

    def index_calls(self) -> None:
        refs = self.refs
        self.calls = frozenset(c for c in refs.calls
                               if c.split(".", 1)[0] in ("self", "cls")
                               or c.split(".", 1)[0] not in refs.bound)
        self.names = frozenset(refs.names)

    @property
    def kind(self) -> str:
        return "method" if self.class_name else "function"

    def _reparse(self) -> None:
        tree = self.module.reparsed()
        for stmt in tree.body:
            if self.class_name is None and isinstance(stmt, (ast.FunctionDef,
                                                              ast.AsyncFunctionDef)):
                if stmt.name == self.name and start_line(stmt) == self.start:
                    self._node, self._cls = stmt, None
                    return
            elif self.class_name and isinstance(stmt, ast.ClassDef) and \
                    stmt.name == self.class_name:
                for item in stmt.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                            item.name == self.name and start_line(item) == self.start:
                        self._node, self._cls = item, stmt
                        return
        raise LookupError(f"{self.module.path}: {self.qualname} not found again")

    @property
    def node(self):
        if self._node is None:
            self._reparse()
        return self._node

    @property
    def cls(self) -> ast.ClassDef | None:
        if self.class_name is None:
            return None
        if self._cls is None:
            self._reparse()
        return self._cls

    def prebuild(self) -> None:
        """Compute everything a Candidate needs now, while the tree is in memory."""
        for name in ("source", "signature", "docstring", "decorators", "refs", "args",
                     "class_bases", "class_header", "class_refs"):
            getattr(self, name)

    def release(self) -> None:
        self._node = self._cls = None

    @cached_property
    def source(self) -> str:
        text = dedent_block(self.module.lines[self.start - 1:self.end], self.node.col_offset)
        if text and not text.endswith(("\n", "\r")):
            text += "\n"
        return text

    @cached_property
    def signature(self) -> str:
        return signature(self.node)

    @cached_property
    def docstring(self) -> str | None:
        return ast.get_docstring(self.node)

    @cached_property
    def decorators(self) -> list[str]:
        return [ast.unparse(d) for d in self.node.decorator_list]

    @cached_property
    def refs(self) -> References:
        return collect_references(self.node)

    @cached_property
    def args(self) -> list[str]:
        a = self.node.args
        return [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]

    @cached_property
    def class_bases(self) -> list[str]:
        return [ast.unparse(b) for b in self.cls.bases] if self.class_name else []

    @cached_property
    def class_header(self) -> str:
        if self.class_name is None:
            return ""
        cls = self.cls
        args = self.class_bases + [ast.unparse(k) for k in cls.keywords]
        return f"class {cls.name}" + (f"({', '.join(args)})" if args else "") + ":"

    @cached_property
    def class_refs(self) -> References | None:
        return _class_header_refs(self.cls) if self.class_name else None


@dataclass
class ClassInfo:
    name: str
    bases: list[str]
    methods: set[str]


@dataclass
class ModuleInfo:
    path: str
    tree: ast.Module | None
    text: str
    bindings: dict[str, Binding]
    stars: list[str]
    import_nodes: list[ast.stmt]         # top-level import statements
    future: list[str]                    # `from __future__ import ...` statements
    functions: set[str]                  # top-level function names
    classes: dict[str, ClassInfo]
    assigned: set[str]
    infos: list[FunctionInfo] = field(default_factory=list)  # candidates(), once indexed
    all_names: frozenset[str] | None = None   # a literal `__all__`, when the module has one

    def exports(self, name: str) -> bool:
        """Whether `from this_module import *` binds `name` (when the module has it)."""
        if self.all_names is not None:
            return name in self.all_names
        return not name.startswith("_")

    def exported_own(self) -> list[str]:
        """Names a star import of this module takes from its own definitions and imports."""
        own = self.functions | set(self.classes) | self.assigned | set(self.bindings)
        return [name for name in own if self.exports(name)]

    @cached_property
    def lines(self) -> list[str]:
        return split_lines(self.text)

    def reparsed(self) -> ast.Module:
        """The syntax tree, parsed again after `release()` (kept until the next release)."""
        if self.tree is None:
            self.tree = ast.parse(self.text, filename=self.path)
        return self.tree

    def release(self) -> None:
        """Drop the syntax tree (the bulk of the memory); the text stays for re-parsing."""
        self.tree = None
        self.__dict__.pop("lines", None)

    @cached_property
    def imports(self) -> list[str]:
        """The module's top-level import statements as text."""
        return [ast.unparse(stmt) for stmt in self.import_nodes]

    @property
    def name(self) -> str:
        return dotted_path(self.path)

    @property
    def package(self) -> str:
        return self.name if self.path.endswith("__init__.py") else package_of(self.path)

    def defines(self, name: str) -> bool:
        return name in self.functions or name in self.classes or name in self.assigned

    def candidates(self) -> list[FunctionInfo]:
        """Top-level functions and methods of top-level classes, minus stubs and dunders."""
        found = []
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not is_trivial(stmt):
                    found.append(FunctionInfo(self, stmt, None))
            elif isinstance(stmt, ast.ClassDef):
                for item in stmt.body:
                    if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        continue
                    if item.name.startswith("__") and item.name.endswith("__") and (
                            item.name not in KEPT_DUNDERS):
                        continue
                    if not is_trivial(item):
                        found.append(FunctionInfo(self, item, stmt))
        return found


def _class_header_refs(cls: ast.ClassDef) -> References:
    refs = References()
    for part in (*cls.bases, *cls.keywords, *cls.decorator_list):
        sub = collect_references(part)
        refs.names |= sub.names
        refs.chains |= sub.chains
    return refs


def parse_module(path: str, text: str) -> ModuleInfo:
    """Parse one module (raises SyntaxError, ValueError or RecursionError when it cannot)."""
    tree = ast.parse(text, filename=path)
    package = package_of(path) if not path.endswith("__init__.py") else dotted_path(path)
    bindings: dict[str, Binding] = {}
    stars: list[str] = []
    imports: list[ast.stmt] = []
    future: list[str] = []
    functions: set[str] = set()
    classes: dict[str, ClassInfo] = {}
    assigned: set[str] = set()
    all_names: frozenset[str] | None = None
    for stmt in top_level_statements(tree.body):
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                future.append(ast.unparse(stmt))
                continue
            found, star = import_bindings(stmt, package)
            for binding in found:
                bindings.setdefault(binding.name, binding)
            stars.extend(star)
            imports.append(stmt)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            methods = {item.name for item in stmt.body
                       if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
            classes[stmt.name] = ClassInfo(stmt.name, [dotted(b) or "" for b in stmt.bases],
                                           methods)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            listed = _all_literal(stmt, targets)
            if listed is not None:
                all_names = listed if not isinstance(stmt, ast.AugAssign) else \
                    listed | (all_names or frozenset())
            for target in targets:
                for node in ast.walk(target):
                    if isinstance(node, ast.Name):
                        assigned.add(node.id)
    return ModuleInfo(path=path, tree=tree, text=text, bindings=bindings, stars=stars,
                      import_nodes=imports, future=future, functions=functions,
                      classes=classes, assigned=assigned, all_names=all_names)


def _all_literal(stmt: ast.stmt, targets: list[ast.expr]) -> frozenset[str] | None:
    """The names of `__all__ = [...]` / `__all__ += [...]` when written as a literal."""
    if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
        return None
    value = stmt.value
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    return frozenset(e.value for e in value.elts
                     if isinstance(e, ast.Constant) and isinstance(e.value, str))
