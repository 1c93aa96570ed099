"""The draft prompt of an accepted candidate: a model-facing spec, never a pointer.

A prompt is the signature, the docstring turned into plain text (Sphinx roles rendered or
dropped, directives such as images dropped, doctest output dropped, links removed) and,
for methods, the class context the method needs: the class with its bases, its
`__init__` signature and the attributes it sets, and the signatures of the methods and
module helpers the method calls. Nothing in it says where the answer lives: the
provenance stays in problem.toml.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from dataclasses import dataclass, field

# Roles whose text is dropped (citations, issue links); every other role keeps its text.
DROPPED_ROLES = {"cite", "footcite", "cite:p", "cite:t", "issue", "pr", "ghissue", "doi",
                 "arxiv"}
# Directives dropped with their block; admonitions keep their text under a label.
DROPPED_DIRECTIVES = {"image", "figure", "plot", "raw", "only", "seealso", "versionadded",
                      "versionchanged", "deprecated", "youtube", "include", "literalinclude",
                      "autosummary", "toctree", "bibliography", "footbibliography", "_"}
ADMONITIONS = {"note", "warning", "tip", "important", "attention", "caution", "hint",
               "danger", "error", "admonition"}
CODE_DIRECTIVES = {"code", "code-block", "sourcecode", "testcode", "math", "doctest"}

_ROLE = re.compile(r"(?<![\w`]):(?:[\w-]+:)*([\w-]+):`([^`]*)`(_{0,2})")
_TITLE_TARGET = re.compile(r"^(.*?)\s*<[^<>]+>$")
_LINK = re.compile(r"`([^`<]+?)\s*<[^`>]+>`__?")
_LITERAL = re.compile(r"``([^`]+)``")
_URL = re.compile(r"\s*\(?<?https?://[^\s>)]*[^\s>).,;:'\"]>?\)?")
_FOOTNOTE_REF = re.compile(r"\s*\[(?:\d+|#\w*|\*)\]_")
_CITE_REF = re.compile(r"\s*\[[A-Za-z][\w-]*\]_")
_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+(?:([\w:-]+)::|(\[[^\]]+\])|(_[^:]+:))\s*(.*)$")
_COMMENT = re.compile(r"^(\s*)\.\.(\s.*)?$")
_DOCTEST = re.compile(r"^\s*(>>>|\.\.\.)(\s|$)")


def _role(match: re.Match) -> str:
    role, text = match.group(1), match.group(2)
    if role in DROPPED_ROLES:
        return ""
    titled = _TITLE_TARGET.match(text)
    if titled and titled.group(1):
        text = titled.group(1)
    if text.startswith("~"):
        text = text[1:].rsplit(".", 1)[-1]
    text = text.lstrip("!")
    return text if role == "math" else f"`{text}`"


def _inline(line: str) -> str:
    line = _LINK.sub(r"\1", line)
    line = _ROLE.sub(_role, line)
    line = _LITERAL.sub(r"`\1`", line)
    line = _FOOTNOTE_REF.sub("", line)
    line = _CITE_REF.sub("", line)
    line = _URL.sub("", line)
    line = re.sub(r"(?<=\S)[ \t]+(?=[,.;)])", "", line)   # where a dropped part was
    return line.rstrip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def docstring_text(doc: str | None) -> str:
    """A docstring as plain text for a model (see the module docstring for the rules)."""
    if not doc:
        return ""
    lines = inspect.cleandoc(doc.expandtabs()).splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = _DIRECTIVE.match(line)
        if directive or _COMMENT.match(line):
            base = _indent(line)
            name = (directive.group(2) or "_") if directive and not directive.group(3) \
                else "_"
            argument = directive.group(5).strip() if directive else ""
            block = []
            i += 1
            while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > base):
                block.append(lines[i])
                i += 1
            body = textwrap.dedent("\n".join(block)).strip("\n").splitlines()
            body = [b for b in body if not re.match(r"^\s*:[\w-]+:", b)]  # its options
            if name in ADMONITIONS:
                text = " ".join(_inline(b).strip() for b in [argument, *body] if b.strip())
                out.append(" " * base + f"{name.capitalize()}: {text}")
            elif name in CODE_DIRECTIVES:
                for b in ([argument] if name == "math" and argument else []) + body:
                    out.append(" " * (base + 4) + b if b.strip() else "")
            elif name not in DROPPED_DIRECTIVES and directive and directive.group(2):
                out.extend(" " * base + _inline(b) for b in body)
            if block and not block[-1].strip():
                out.append("")
            continue
        if _DOCTEST.match(line):
            base = _indent(line)
            while i < len(lines) and lines[i].strip():
                if _DOCTEST.match(lines[i]):
                    out.append(lines[i].rstrip())
                elif _indent(lines[i]) < base:
                    break
                i += 1   # doctest output: dropped (it would give the answer away)
            continue
        text = _inline(line)
        if text.endswith("::"):
            text = text[:-1]
        out.append(text)
        i += 1
    text = "\n".join(out)
    text = re.sub(r"\n{3,}", "\n\n", text)
    text = re.sub(r"(?m)^[ \t]+$", "", text)
    return text.strip()


# -- class context ------------------------------------------------------------------


@dataclass
class Context:
    """What a method (or function) needs from its module, as signatures only."""

    class_header: str = ""
    class_doc: str = ""                                      # the class's docstring, as text
    init_signature: str | None = None
    attributes: list[str] = field(default_factory=list)      # `self.x = ...` lines
    methods: list[str] = field(default_factory=list)         # signatures of self.m called
    helpers: list[str] = field(default_factory=list)         # module functions it calls


def _signature(node) -> str:
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    text = f"{prefix} {node.name}({ast.unparse(node.args)})"
    if node.returns is not None:
        text += f" -> {ast.unparse(node.returns)}"
    return text + ":"


def _short(node: ast.AST, limit: int = 60) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit and "\n" not in text else "..."


def _attributes(init) -> list[str]:
    found: dict[str, str] = {}
    for node in ast.walk(init):
        targets, value = [], None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        for target in targets:
            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self" and target.attr not in found):
                found[target.attr] = f"self.{target.attr} = {_short(value)}"
    return list(found.values())


def context_for(module_text: str, qualname: str) -> Context:
    """The context of QUALNAME (`f` or `Cls.m`) in a module's source; empty if not found."""
    try:
        tree = ast.parse(module_text)
    except (SyntaxError, ValueError):
        return Context()
    functions = {s.name: s for s in tree.body
                 if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    classes = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef)}
    cls_name, _, name = qualname.rpartition(".")
    context = Context()
    if cls_name:
        cls = classes.get(cls_name)
        if cls is None:
            return context
        members = {s.name: s for s in cls.body
                   if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        target = members.get(name)
        bases = [ast.unparse(b) for b in cls.bases] + [ast.unparse(k) for k in cls.keywords]
        context.class_header = f"class {cls.name}" + (f"({', '.join(bases)})" if bases
                                                      else "") + ":"
        context.class_doc = docstring_text(ast.get_docstring(cls))
        init = members.get("__init__")
        if init is not None and name != "__init__":
            context.init_signature = _signature(init)
            context.attributes = _attributes(init)
    else:
        members = {}
        target = functions.get(name)
    if target is None:
        return context
    called_self, called_names = [], []
    for node in ast.walk(target):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id == "self"):
            called_self.append(func.attr)
        elif isinstance(func, ast.Name):
            called_names.append(func.id)
    for method in dict.fromkeys(called_self):
        if method in members and method not in (name, "__init__"):
            context.methods.append(_signature(members[method]))
    for helper in dict.fromkeys(called_names):
        if helper in functions and helper != name:
            context.helpers.append(_signature(functions[helper]))
    return context


def skeleton(signature: str, kind: str, context: Context) -> str:
    """The code block of a prompt: the signature, inside its class skeleton for a method."""
    if kind != "method" or not context.class_header:
        return signature
    body = []
    if context.init_signature:
        body.append(context.init_signature)
        body += [f"    {line}" for line in context.attributes] or ["    ..."]
        body.append("")
    for method in context.methods:
        body += [method, "    ...", ""]
    body += [signature, "    # to implement"]
    return context.class_header + "\n" + textwrap.indent("\n".join(body), "    ",
                                                          lambda line: bool(line.strip()))


def prompt_markdown(intro: str, signature: str, kind: str, docstring: str | None,
                    context: Context) -> str:
    """The prompt body (without the draft mark): intro, code skeleton, spec, helpers."""
    about = docstring_text(docstring) or (
        "(The upstream code has no docstring: say what it computes, its inputs and "
        "outputs, shapes and edge cases.)")
    parts = [intro, f"```python\n{skeleton(signature, kind, context)}\n```", about]
    if kind == "method" and context.class_doc:
        name = context.class_header.removeprefix("class ").split("(")[0].rstrip(":")
        parts.append(f"About the class `{name}`:\n\n{context.class_doc}")
    if context.helpers:
        helpers = "\n".join(context.helpers)
        parts.append("These functions of the same module are available to call:\n\n"
                     f"```python\n{helpers}\n```")
    return "\n\n".join(parts) + "\n"
