"""Code extraction: from raw model text (prose, fences, reasoning) to a module we can run.

Order of preference for a raw response:
1. a fenced python block that parses and defines the entry point (the longest such);
2. else the longest fenced python block that parses;
3. else the whole text, if it parses;
4. else an unfenced run of code inside prose (from the first `def`/`class`/`import` line),
   if it parses and defines the entry point;
5. else nothing (`no_code`).

The chosen block is kept whole: helper functions, classes and imports the model wrote
stay. When the model spread its answer over several blocks (imports in one, a helper in
another), the imports, functions and classes the chosen block uses but does not define
are brought in from the other blocks that parse. Example-usage statements are not.
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
from dataclasses import dataclass

PYTHON_LANGS = {"", "python", "py", "python3", "py3", "ipython"}
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\n]*)$")
_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_CODE_START = re.compile(r"^(?:import\s|from\s+\S+\s+import\s|def\s|async\s+def\s|class\s|@)")
_BUILTINS = set(dir(builtins))

# Methods (how the code was obtained), stored with each sample.
FENCED_ENTRY = "fenced-entry"
FENCED = "fenced"
WHOLE = "whole"
UNFENCED = "unfenced"
NONE = "none"


@dataclass(frozen=True)
class Block:
    lang: str
    text: str
    closed: bool


@dataclass(frozen=True)
class Extraction:
    code: str | None
    method: str
    merged: int = 0  # how many other blocks contributed imports or helpers

    @property
    def ok(self) -> bool:
        return self.code is not None


def fenced_blocks(text: str) -> list[Block]:
    """Every fenced block (``` or ~~~, any info string), in order.

    An unclosed block runs to the end of the text (truncated model output).
    """
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence = match.group("fence")
        info = match.group("info").strip()
        lang = info.split()[0].lower() if info else ""
        lang = lang.lstrip("{.").rstrip("}")
        body = []
        j = i + 1
        closed = False
        while j < len(lines):
            line = lines[j]
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                closed = True
                break
            body.append(line)
            j += 1
        blocks.append(Block(lang, _dedent("\n".join(body)) + ("\n" if body else ""), closed))
        i = j + 1
    return blocks


def _dedent(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def defines(tree: ast.Module, entry_point: str) -> bool:
    """Does this module define the entry point (`name` or `Class.method`) at top level?"""
    if "." in entry_point:
        cls, method = entry_point.split(".", 1)
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == cls:
                return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                           and n.name == method for n in node.body)
        return False
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               and node.name == entry_point
               for node in tree.body)


def _bound_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        names |= _binds(node)
    return names


def _binds(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names
                if alias.name != "*"}
    names = set()
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _used_names(nodes) -> set[str]:
    used = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                used.add(sub.id)
    return used - _BUILTINS


def _merge_helpers(code: str, tree: ast.Module, others: list[tuple[str, ast.Module]]
                   ) -> tuple[str, int]:
    """Bring in imports/defs/classes from other blocks that `code` uses but never binds."""
    bound = _bound_names(tree)
    needed = _used_names(tree.body) - bound
    imports: list[str] = []
    helpers: list[str] = []
    contributing: set[int] = set()
    taken: set[tuple[int, int]] = set()
    for _round in range(4):  # helpers may need further imports or helpers
        added = False
        for index, (text, other) in enumerate(others):
            for pos, node in enumerate(other.body):
                if (index, pos) in taken:
                    continue
                if not isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef,
                                         ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                provides = _binds(node) & needed
                if not provides:
                    continue
                segment = ast.get_source_segment(text, node, padded=False)
                if segment is None:
                    continue
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    imports.append(segment)
                else:
                    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                    segment = "\n".join(text.splitlines()[start - 1:node.end_lineno])
                    helpers.append(segment)
                    needed |= _used_names([node]) - bound
                taken.add((index, pos))
                contributing.add(index)
                bound |= _binds(node)
                needed -= _binds(node)
                added = True
        if not added or not needed:
            break
    if not imports and not helpers:
        return code, 0
    parts = []
    if imports:
        parts.append("\n".join(imports))
    parts.extend(helpers)
    parts.append(code.rstrip("\n"))
    merged = "\n\n".join(parts) + "\n"
    if parse(merged) is None:
        return code, 0
    return merged, len(contributing)


def _strip_reasoning(text: str) -> str:
    return _THINK.sub("", text)


def extract_code(text: str | None, entry_point: str) -> Extraction:
    """The code to run from a raw model response (see the module docstring for the rules)."""
    if not text or not text.strip():
        return Extraction(None, NONE)
    stripped = _strip_reasoning(text)
    result = _extract(stripped, entry_point)
    if not result.ok and stripped != text:
        result = _extract(text, entry_point)
    return result


def _extract(text: str, entry_point: str) -> Extraction:
    blocks = [b for b in fenced_blocks(text) if b.lang in PYTHON_LANGS and b.text.strip()]
    parsed = [(b.text, tree) for b in blocks if (tree := parse(b.text)) is not None]
    if parsed:
        defining = [(t, tree) for t, tree in parsed if defines(tree, entry_point)]
        pool, method = (defining, FENCED_ENTRY) if defining else (parsed, FENCED)
        # Longest wins; on a tie the later block (models put the final version last).
        best = max(range(len(pool)), key=lambda i: (len(pool[i][0].strip()), i))
        code, tree = pool[best]
        others = [p for p in parsed if p[0] is not code]
        code, merged = _merge_helpers(code, tree, others)
        return Extraction(_normalise(code), method, merged)
    if parse(text) is not None and not _only_prose(text):
        return Extraction(_normalise(text), WHOLE)
    code = _unfenced(text, entry_point)
    if code is not None:
        return Extraction(_normalise(code), UNFENCED)
    return Extraction(None, NONE)


def _only_prose(text: str) -> bool:
    """A single bare expression like `Sure!` or a name parses too; that is not code."""
    tree = parse(text)
    return tree is None or not tree.body or all(
        isinstance(n, ast.Expr) and isinstance(n.value, (ast.Name, ast.Constant))
        for n in tree.body)


def _unfenced(text: str, entry_point: str) -> str | None:
    """Code written straight into prose: from a code-looking line, trim the tail until it parses."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _CODE_START.match(line)][:20]
    for start in starts:
        end = len(lines)
        # Drop trailing prose lines (non-indented, not code-looking) one by one.
        while end > start:
            chunk = "\n".join(lines[start:end])
            tree = parse(chunk)
            if tree is not None and defines(tree, entry_point):
                return chunk
            end -= 1
            while end > start and not lines[end - 1].strip():
                end -= 1
    return None


def _normalise(code: str) -> str:
    return code.strip("\n") + "\n"


# -- prompts: the code part a completion continues -------------------------------------


def python_blocks(markdown: str) -> list[str]:
    return [b.text for b in fenced_blocks(markdown) if b.lang in PYTHON_LANGS]


def _mentions(code: str, entry_point: str) -> bool:
    if "." in entry_point:
        name = entry_point.split(".")[0]
        return re.search(rf"^\s*class\s+{re.escape(name)}\b", code, re.MULTILINE) is not None
    pattern = rf"^\s*(?:async\s+)?def\s+{re.escape(entry_point)}\b"
    return re.search(pattern, code, re.MULTILINE) is not None


def code_prompt(prompt: str, entry_point: str, reference: str | None = None) -> str:
    """The code a `completion` continues: the prompt's signature block, body placeholder removed.

    Prompts are markdown; the code prompt is the last python block that declares the entry
    point (else the last python block). Module-level imports of the reference solution are
    put in front when the block lacks them, so a completion can run on its own.
    """
    blocks = python_blocks(prompt)
    declaring = [b for b in blocks if _mentions(b, entry_point)]
    chosen = (declaring or blocks or [""])[-1]
    lines = chosen.rstrip().splitlines()
    while lines and lines[-1].strip() in ("...", "pass", ""):
        lines.pop()
    if lines and re.search(r":\s*\.\.\.\s*$", lines[-1]):
        lines[-1] = re.sub(r"\s*\.\.\.\s*$", "", lines[-1])
    body = "\n".join(lines)
    imports = _reference_imports(reference, body) if reference else []
    head = "\n".join(imports) + "\n\n\n" if imports else ""
    return head + body + ("\n" if body else "")


def _declares(tree: ast.Module, entry_point: str) -> bool:
    if "." in entry_point:
        cls, method = entry_point.split(".", 1)
        return any(isinstance(node, ast.ClassDef) and node.name == cls and any(
            isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == method
            for item in node.body) for node in tree.body)
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               and node.name == entry_point for node in tree.body)


def signature_problem(prompt: str, entry_point: str) -> str | None:
    """Why the prompt has no parsable signature for the entry point (None: it has one).

    The bundle's `code_prompt` is that signature: a python block that declares the entry
    point (`def name(...)`, or `class C:` with `def method(...)` for `C.method`) and
    parses, a body of `...` or none at all.
    """
    blocks = python_blocks(prompt)
    if not blocks:
        return "the prompt has no ```python block with the signature of " + entry_point
    for block in blocks:
        text = block.rstrip()
        tree = parse(text) or (parse(text + "\n    ...") if text.endswith(":") else None)
        if tree is None and "." in entry_point and text.endswith(":"):
            tree = parse(text + "\n        ...")
        if tree is not None and _declares(tree, entry_point):
            return None
    if any(_mentions(b, entry_point) for b in blocks):
        return f"the prompt's python block declaring {entry_point} does not parse"
    return f"no python block of the prompt declares {entry_point}"


def _reference_imports(reference: str, body: str) -> list[str]:
    tree = parse(reference)
    if tree is None:
        return []
    present = set(body.splitlines())
    out = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            segment = ast.get_source_segment(reference, node)
            if segment and segment not in present:
                out.append(segment)
    return out


def completion_code(prefix: str, completion: str, entry_point: str) -> tuple[str, str]:
    """(code, method) for a completion row: the code prompt followed by the completion.

    A completion that is itself a whole module defining the entry point (models often
    repeat the signature) is used on its own.
    """
    glue = "" if prefix.endswith("\n") or not prefix else "\n"
    joined = prefix + glue + completion
    if parse(joined) is not None:
        return joined, "completion"
    tree = parse(completion)
    if tree is not None and defines(tree, entry_point):
        return completion, "completion-standalone"
    fenced = extract_code(completion, entry_point)
    if fenced.ok and parse(fenced.code) is not None and defines(parse(fenced.code), entry_point):
        return fenced.code, "completion-" + fenced.method
    return joined, "completion"


def solution_code(solution: str, entry_point: str) -> tuple[str, str]:
    """(code, method) for a `solution` row: used as given, unless it is markdown around code."""
    if parse(solution) is not None or "```" not in solution and "~~~" not in solution:
        return solution, "solution"
    fenced = extract_code(solution, entry_point)
    if fenced.ok:
        return fenced.code, "solution-" + fenced.method
    return solution, "solution"
