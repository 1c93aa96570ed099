"""What a dotted name means in a repository: its modules' namespaces, resolved once.

Every module gets one namespace table: its own definitions and imports, plus the names
its star imports bring in. Star imports are expanded once per module (honouring
`__all__`), import cycles are cut, and every lookup is memoised, so resolving all the
references of a repository costs time linear in their number. Nothing here builds new
dotted names by recursion: a reference is split once into a module prefix and the
attributes walked from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from curator.mining.modules import ModuleInfo

MODULE, CLASS, FUNCTION = "module", "class", "function"

# Rounds of recomputing the star tables of modules whose first pass met an import cycle.
_CYCLE_ROUNDS = 3


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
        self._stars: dict[str, dict[str, str]] = {}
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

    def star_table(self, module: ModuleInfo) -> dict[str, str]:
        """Name -> path of the module that binds it, for names star imports bring in."""
        if module.path not in self._stars:
            self._build_stars(module, set())
        return self._stars[module.path]

    def _build_stars(self, module: ModuleInfo, active: set[str]) -> bool:
        """Fill the table of `module`; False when an import cycle was cut on the way."""
        complete = True
        active.add(module.path)
        table: dict[str, str] = {}
        for star in module.stars:
            for source in self.modules_named(star)[:1]:
                if source.path == module.path:
                    continue
                for name in source.exported_own():
                    table.setdefault(name, source.path)
                if source.path in active:
                    complete = False   # a cycle: its table is still being built
                    continue
                if source.path not in self._stars:
                    complete &= self._build_stars(source, active)
                for name, owner in self._stars.get(source.path, {}).items():
                    if source.exports(name):
                        table.setdefault(name, owner)
        self._stars[module.path] = table
        active.discard(module.path)
        if not complete and not active:
            self._close_cycles()
        return complete

    def _close_cycles(self) -> None:
        """Modules in star-import cycles: merge their tables until nothing changes."""
        for _ in range(_CYCLE_ROUNDS):
            changed = False
            for path, table in self._stars.items():
                module = self.modules[path]
                for star in module.stars:
                    for source in self.modules_named(star)[:1]:
                        for name, owner in self._stars.get(source.path, {}).items():
                            if name not in table and source.exports(name):
                                table[name] = owner
                                changed = True
            if not changed:
                return

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
        owner = self.star_table(module).get(name)
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
        for i in range(len(parts), 0, -1):
            modules = self.modules_named(".".join(parts[:i]))
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
