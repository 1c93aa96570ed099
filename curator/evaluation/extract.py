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
are brought in from the other blocks that parse (and what those use in turn; the first
definition of a name), in the order of the response, after the block's `from __future__`
imports. Example-usage statements are not. Reasoning sections (`<think>...</think>`)
are ignored unless the only code is there.
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
from dataclasses import dataclass

from curator.pysource.syntax import parse

PYTHON_LANGS = {"", "python", "py", "python3", "py3", "ipython"}
# An opening fence: ``` or ~~~ (three or more), then an info string whose first word is
# the language (pandoc's `{.python}` and `{python}` braces are not part of it).
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*[{.]*(?P<lang>[^\s`{}]*)[^`\n]*$")
_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_CODE_START = re.compile(r"^(?:import\s|from\s+\S+\s+import\s|def\s|async\s+def\s|class\s|@)")
_BUILTINS = set(dir(builtins))
_IMPORTS = (ast.Import, ast.ImportFrom)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEFINITIONS = (*_IMPORTS, *_FUNCTIONS, ast.ClassDef)  # what other blocks can contribute

# Methods (how the code was obtained), stored with each sample.
FENCED_ENTRY = "fenced-entry"
FENCED = "fenced"
WHOLE = "whole"
UNFENCED = "unfenced"
NONE = "none"


@dataclass(frozen=True)
class Block:
    lang: str   # lower case; "" for a bare fence
    text: str   # dedented, without leading or trailing blank lines


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

    A block closes at a line of only its fence character, at least as long as its opening
    fence (so a shorter fence inside, as in a docstring's example, stays in the block). An
    unclosed block runs to the end of the text (truncated model output).
    """
    blocks: list[Block] = []
    lines = iter(text.splitlines())
    for line in lines:
        opening = _FENCE.match(line)
        if opening is None:
            continue
        fence = opening.group("fence")
        body = []
        for inner in lines:  # the same iterator: scanning resumes after the block
            stripped = inner.strip()
            if set(stripped) == set(fence) and len(stripped) >= len(fence):
                break
            body.append(inner)
        blocks.append(Block(opening.group("lang").lower(), _dedent("\n".join(body))))
    return blocks


def _dedent(text: str) -> str:
    return textwrap.dedent(text).strip()


def defines(tree: ast.Module, entry_point: str) -> bool:
    """Does this module define the entry point (`name` or `Class.method`) at top level?"""
    cls, _, name = entry_point.rpartition(".")
    body = tree.body
    if cls:
        body = [item for node in tree.body if isinstance(node, ast.ClassDef) and node.name == cls
                for item in node.body]
    return any(isinstance(node, _FUNCTIONS) and node.name == name for node in body)


def _bound_names(tree: ast.Module) -> set[str]:
    return set().union(*(_binds(node) for node in tree.body))


def _binds(node: ast.stmt) -> set[str]:
    """The names a top-level statement binds (`try: import x` and `for i in ...` too)."""
    if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
        return {node.name}
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, _IMPORTS):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in sub.names}
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
    return names


def _used_names(nodes) -> set[str]:
    used = set()
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                used.add(sub.id)
    return used - _BUILTINS


def _merge_helpers(code: str, tree: ast.Module, blocks: list[tuple[str, ast.Module]]
                   ) -> tuple[str, int]:
    """Bring in imports/defs/classes from the blocks that `code` uses but never binds.

    Helpers may need further imports or helpers; when two blocks define a name, the first
    is taken. The pieces keep their order in the response (a base class before its
    subclass), imports first, all after the block's `from __future__` imports.
    """
    bound = _bound_names(tree)
    needed = _used_names(tree.body) - bound
    taken: dict[tuple[int, int], tuple[str, ast.stmt]] = {}
    while True:
        before = len(taken)
        for index, (text, other) in enumerate(blocks):
            for pos, node in enumerate(other.body):
                if isinstance(node, _DEFINITIONS) and _binds(node) & needed:
                    taken[index, pos] = (text, node)
                    bound |= _binds(node)
                    needed = (needed | _used_names([node])) - bound
        if len(taken) == before:
            break
    pieces = [taken[place] for place in sorted(taken)]
    imports = "\n".join(ast.get_source_segment(text, node)
                        for text, node in pieces if isinstance(node, _IMPORTS))
    helpers = [_with_decorators(text, node) for text, node in pieces
               if not isinstance(node, _IMPORTS)]
    # `from __future__` imports must stay first in a module: the pieces go after them.
    future = max((node.end_lineno for node in tree.body
                  if isinstance(node, ast.ImportFrom) and node.module == "__future__"), default=0)
    lines = code.splitlines()
    head, rest = "\n".join(lines[:future]), "\n".join(lines[future:]).strip()
    merged = "\n\n".join(part for part in (head, imports, *helpers, rest) if part)
    return merged, len({index for index, _pos in taken})


def _with_decorators(text: str, node: ast.stmt) -> str:
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return "\n".join(text.splitlines()[first - 1:node.end_lineno])


def extract_code(text: str | None, entry_point: str) -> Extraction:
    """The code to run from a raw model response (see the module docstring for the rules).

    Reasoning sections (`<think>...</think>`) are ignored, unless the code is only there.
    """
    if not text or not text.strip():
        return Extraction(None, NONE)
    stripped = _THINK.sub("", text)
    result = _extract(stripped, entry_point)
    if not result.ok and stripped != text:
        result = _extract(text, entry_point)
    return result


def _extract(text: str, entry_point: str) -> Extraction:
    blocks = [b.text for b in fenced_blocks(text) if b.lang in PYTHON_LANGS and b.text]
    parsed = [(code, tree) for code in blocks if (tree := parse(code)) is not None]
    if parsed:
        defining = [(code, tree) for code, tree in parsed if defines(tree, entry_point)]
        pool, method = (defining, FENCED_ENTRY) if defining else (parsed, FENCED)
        # Longest wins; on a tie the later block (models put the final version last).
        code, tree = max(reversed(pool), key=lambda block: len(block[0]))
        code, merged = _merge_helpers(code, tree, parsed)
        return Extraction(_normalise(code), method, merged)
    tree = parse(text)
    if tree is not None and not _only_prose(tree):
        return Extraction(_normalise(text), WHOLE)
    code = _unfenced(text, entry_point)
    if code is not None:
        return Extraction(_normalise(code), UNFENCED)
    return Extraction(None, NONE)


def _only_prose(tree: ast.Module) -> bool:
    """A single bare expression like `Sure` or `42` parses too; that is not code."""
    return all(isinstance(n, ast.Expr) and isinstance(n.value, (ast.Name, ast.Constant))
               for n in tree.body)


def _unfenced(text: str, entry_point: str) -> str | None:
    """Code written straight into prose: from a code-looking line, trim the tail until it parses."""
    lines = text.splitlines()
    # At most 20 starting lines: bounded work on long prose.
    starts = [i for i, line in enumerate(lines) if _CODE_START.match(line)][:20]
    for start in starts:
        for end in range(len(lines), start, -1):  # drop trailing lines one by one
            chunk = "\n".join(lines[start:end])
            tree = parse(chunk)
            if tree is not None and defines(tree, entry_point):
                return chunk
    return None


def _normalise(code: str) -> str:
    return code.strip() + "\n"


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
    lines = chosen.splitlines()
    while lines and lines[-1].strip() in ("...", "pass", ""):
        lines.pop()
    if lines and re.search(r":\s*\.\.\.\s*$", lines[-1]):
        lines[-1] = re.sub(r"\s*\.\.\.\s*$", "", lines[-1])
    body = "\n".join(lines)
    imports = _reference_imports(reference, body) if reference else []
    head = "\n".join(imports) + "\n\n\n" if imports else ""
    return head + body + ("\n" if body else "")


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
        tree = _signature_tree(block)
        if tree is not None and defines(tree, entry_point):
            return None
    if any(_mentions(b, entry_point) for b in blocks):
        return f"the prompt's python block declaring {entry_point} does not parse"
    return f"no python block of the prompt declares {entry_point}"


def _signature_tree(block: str) -> ast.Module | None:
    """The block parsed; a last header without a body (`def f(x):`) is given `...` first."""
    if (tree := parse(block)) is not None:
        return tree
    last = block.splitlines()[-1]
    return parse(f"{block}\n{last[:len(last) - len(last.lstrip())]}    ...")


def _reference_imports(reference: str, body: str) -> list[str]:
    tree = parse(reference)
    if tree is None:
        return []
    present = set(body.splitlines())
    imports = [ast.get_source_segment(reference, node) for node in tree.body
               if isinstance(node, _IMPORTS)]
    return [line for line in imports if line not in present]


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
    if fenced.ok and defines(parse(fenced.code), entry_point):
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
