"""What a dotted name means in a repository: its modules' namespaces, resolved once.

A name in a module is its own definition or import, or else comes from its star imports.
The star-import graph is condensed once into its import cycles (strongly connected
components, whose members share one table of the names they define) and a DAG between
them; a star-imported name is looked up once per component (honouring `__all__`) and
memoised, as is every other lookup, so resolving all the references of a repository
costs time linear in their number. Nothing here builds new
dotted names by recursion: a reference is split once into a module prefix and the
attributes walked from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from curator.pysource.modules import ModuleInfo

MODULE, CLASS, FUNCTION = "module", "class", "function"


@dataclass(frozen=True)
class Symbol:
    """A module, class or function (qualname `f` or `Cls.m`) defined in the repository.

    `receiver` is the class a method was looked up on (`Sub` for an inherited
    `Base.forward` reached as `Sub.forward`), so calls on `self` dispatch to `Sub`'s
    overrides.
    """

    kind: str
    path: str
    qualname: str = ""
    receiver: tuple[str, str] | None = None   # (path, class name)

    @property
    def key(self) -> tuple[str, str]:
        return self.path, self.qualname


class SymbolTable:
    """Resolution of dotted names over the source modules of one commit."""

    def __init__(self, modules: dict[str, ModuleInfo], import_name: dict[str, str]):
        self.modules = modules
        self.import_name = import_name
        self._exact: dict[str, list[ModuleInfo]] = {}
        self._suffix: dict[str, list[ModuleInfo]] = {}
        for module in modules.values():
            own = import_name.get(module.path)
            names = {module.name, own} if own else {module.name}
            for name in names:
                self._exact.setdefault(name, []).append(module)
            parts = module.name.split(".")
            for i in range(1, len(parts)):
                self._suffix.setdefault(".".join(parts[i:]), []).append(module)
        self._component: dict[str, int] | None = None
        self._star_memo: dict[tuple[int, str], str | None] = {}
        self._lookups: dict[tuple[str, str], tuple[Symbol, ...]] = {}
        self._refs: dict[str, tuple[Symbol, ...]] = {}
        self._methods: dict[tuple[str, str, str], tuple[Symbol, ...]] = {}
        self._active: set = set()

    # -- modules -------------------------------------------------------------

    def modules_named(self, dotted: str) -> list[ModuleInfo]:
        """Modules imported as `dotted`: the exact import name, else a unique-ish suffix."""
        return self._exact.get(dotted) or self._suffix.get(dotted, [])

    def own_name(self, module: ModuleInfo) -> str:
        return self.import_name.get(module.path) or module.name

    # -- star-import tables ------------------------------------------------------

    def _star_graph(self) -> None:
        """Group modules into strongly connected components of the star-import graph.

        Members of one component (an import cycle) share one table of the names they
        define; a component points at the components it star-imports from, which form
        a DAG. Nothing is copied from one table into another, so a module that
        star-imports a large package costs nothing until a name is looked up.
        """
        edges: dict[str, list[ModuleInfo]] = {}
        for module in self.modules.values():
            targets = []
            for star in module.stars:
                for source in self.modules_named(star)[:1]:
                    if source.path != module.path:
                        targets.append(source)
            edges[module.path] = targets
        self._component = {}
        self._members: list[list[ModuleInfo]] = []
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        counter = 0
        for root in self.modules:
            if root in index:
                continue
            work = [(root, 0)]
            while work:  # Tarjan's algorithm without recursion
                path, i = work.pop()
                if i == 0:
                    index[path] = low[path] = counter
                    counter += 1
                    stack.append(path)
                    on_stack.add(path)
                targets = edges[path]
                if i < len(targets):
                    work.append((path, i + 1))
                    target = targets[i].path
                    if target not in index:
                        work.append((target, 0))
                    elif target in on_stack:
                        low[path] = min(low[path], index[target])
                    continue
                if work and low[path] < low[work[-1][0]]:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[path])
                if low[path] == index[path]:
                    members = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        self._component[member] = len(self._members)
                        members.append(self.modules[member])
                        if member == path:
                            break
                    self._members.append(members)
        self._successors: list[list[ModuleInfo]] = []
        for members in self._members:
            component = self._component[members[0].path]
            self._successors.append([t for m in members for t in edges[m.path]
                                     if self._component[t.path] != component])
        self._tables: list[dict[str, str] | None] = [None] * len(self._members)

    def _own_table(self, component: int) -> dict[str, str]:
        table = self._tables[component]
        if table is None:
            table = {}
            for module in self._members[component]:
                for name in module.exported_own():
                    table.setdefault(name, module.path)
            self._tables[component] = table
        return table

    def star_owner(self, module: ModuleInfo, name: str) -> str | None:
        """Path of the module whose binding of `name` a star import of `module` brings in."""
        if not module.stars:
            return None
        if self._component is None:
            self._star_graph()
        return self._component_owner(self._component[module.path], name)

    def _component_owner(self, component: int, name: str) -> str | None:
        key = (component, name)
        if key in self._star_memo:
            return self._star_memo[key]
        owner = None
        if len(self._members[component]) > 1:   # an import cycle: the shared table
            owner = self._own_table(component).get(name)
        if owner is None:
            for target in self._successors[component]:
                if not target.exports(name):
                    continue
                if target.defines(name) or name in target.bindings:
                    owner = target.path
                else:
                    owner = self._component_owner(self._component[target.path], name)
                if owner is not None:
                    break
        self._star_memo[key] = owner
        return owner

    # -- names -----------------------------------------------------------------

    def lookup(self, module: ModuleInfo, name: str) -> tuple[Symbol, ...]:
        """What `name` means at the top level of `module` (memoised)."""
        key = (module.path, name)
        if key in self._lookups:
            return self._lookups[key]
        if key in self._active:
            return ()
        self._active.add(key)
        try:
            found = self._lookup(module, name)
        finally:
            self._active.discard(key)
        self._lookups[key] = found
        return found

    def _lookup(self, module: ModuleInfo, name: str) -> tuple[Symbol, ...]:
        if name in module.functions:
            return (Symbol(FUNCTION, module.path, name),)
        if name in module.classes:
            return (Symbol(CLASS, module.path, name),)
        binding = module.bindings.get(name)
        if binding is not None:
            return self.resolve(binding.target)
        if module.path.endswith("__init__.py"):
            sub = self._exact.get(f"{self.own_name(module)}.{name}")
            if sub:
                return tuple(Symbol(MODULE, m.path) for m in sub)
        owner = self.star_owner(module, name)
        if owner is not None and owner != module.path:
            return self.lookup(self.modules[owner], name)
        return ()

    def resolve(self, ref: str) -> tuple[Symbol, ...]:
        """Every symbol an absolute dotted reference can denote (memoised)."""
        if ref in self._refs:
            return self._refs[ref]
        if ref in self._active:
            return ()
        self._active.add(ref)
        try:
            found = self._resolve(ref)
        finally:
            self._active.discard(ref)
        self._refs[ref] = found
        return found

    def _resolve(self, ref: str) -> tuple[Symbol, ...]:
        parts = ref.split(".")
        # Walk attributes from the outermost module, as Python does: `pkg.mod.f` where
        # pkg/__init__.py imports a function `mod` means that function, not pkg/mod.py.
        for i in range(1, len(parts) + 1):
            modules = self._exact.get(".".join(parts[:i]))
            if modules:
                found = [s for m in modules
                         for s in self.walk(Symbol(MODULE, m.path), parts[i:])]
                if found:
                    return tuple(dict.fromkeys(found))
        for i in range(len(parts), 0, -1):
            modules = self._suffix.get(".".join(parts[:i]))
            if not modules:
                continue
            found: list[Symbol] = []
            for module in modules:
                found.extend(self.walk(Symbol(MODULE, module.path), parts[i:]))
            if found:
                return tuple(dict.fromkeys(found))
        return ()

    def walk(self, start: Symbol, attrs: list[str]) -> list[Symbol]:
        current = [start]
        for attr in attrs:
            current = [s for symbol in current for s in self.attribute(symbol, attr)]
            if not current:
                break
        return current

    def attribute(self, symbol: Symbol, attr: str) -> tuple[Symbol, ...]:
        if symbol.kind == MODULE:
            return self.lookup(self.modules[symbol.path], attr)
        if symbol.kind == CLASS:
            return self.method(symbol, attr)
        return ()

    def resolve_in(self, module: ModuleInfo, dotted_name: str) -> tuple[Symbol, ...]:
        """A dotted name as written inside `module` (rooted at one of its names)."""
        root, *rest = dotted_name.split(".")
        found = []
        for symbol in self.lookup(module, root):
            found.extend(self.walk(symbol, rest))
        return tuple(dict.fromkeys(found))

    # -- classes -----------------------------------------------------------------

    def method(self, cls: Symbol, name: str, receiver: tuple[str, str] | None = None
               ) -> tuple[Symbol, ...]:
        """`name` looked up on a class and its bases in the repository (its MRO, roughly)."""
        receiver = receiver or (cls.path, cls.qualname)
        key = (cls.path, cls.qualname, name)
        if key not in self._methods:
            if key in self._active:
                return ()
            self._active.add(key)
            try:
                self._methods[key] = self._method(cls, name)
            finally:
                self._active.discard(key)
        return tuple(Symbol(s.kind, s.path, s.qualname, receiver)
                     for s in self._methods[key])

    def _method(self, cls: Symbol, name: str) -> tuple[Symbol, ...]:
        module = self.modules[cls.path]
        info = module.classes.get(cls.qualname)
        if info is None:
            return ()
        if name in info.methods:
            return (Symbol(FUNCTION, cls.path, f"{cls.qualname}.{name}"),)
        for base in self.bases(cls):
            found = self.method(base, name)
            if found:
                return tuple(Symbol(s.kind, s.path, s.qualname) for s in found)
        return ()

    def bases(self, cls: Symbol) -> list[Symbol]:
        """The repository classes `cls` derives from directly, in order."""
        module = self.modules[cls.path]
        info = module.classes.get(cls.qualname)
        found = []
        for base in info.bases if info else []:
            if not base:
                continue
            for symbol in self.resolve_in(module, base):
                if symbol.kind == CLASS and symbol.key != cls.key:
                    found.append(symbol)
        return found
