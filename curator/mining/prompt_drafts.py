"""Prompts drafted by a model, beside the docstring draft, for the annotator to choose.

DL-Bench drafted each prompt with an LLM from the function's code and docstring, then
people edited it. Here the model is given the function's code, docstring, signature and
class context (the class header, `__init__` and the attributes it sets, the methods and
module helpers it calls) and asked for a model-facing specification in DL-Bench's style.
It is never given the path or the repository: only the function's own source goes out,
not its module's imports or comments around it.

A draft that contains the reference's body, `MAX_COPIED_LINES` or more consecutive
non-trivial lines of it, is refused with the reason (a prompt that gives the answer away
measures nothing). An accepted draft is stored in `prompt_drafts` under `model:NAME`
with the hash of the request template; the problem's history records the model and the
hash (audit action `draft_prompt`, or `draft_prompt_refused`). Drafts never replace
prompt.md by themselves: `use` does, when a person picks one.
"""

from __future__ import annotations

import ast
import hashlib
import re
import textwrap
from dataclasses import dataclass

from curator import sync
from curator.errors import CuratorError
from curator.llm import ChatClient, EndpointSettings
from curator.mining import drafts
from curator.problem import Problem
from curator.store import Store, now
from curator.store import problems as problem_store
from curator.store import prompt_drafts as draft_store

DOCSTRING = "docstring"
MAX_COPIED_LINES = 3
# Lines too common to count as copying ("return x", "else:", "pass").
_TRIVIAL = re.compile(r"^(?:return\s*\w*|else:|try:|finally:|pass|break|continue|\)|\]|\}|"
                      r"[)\]}]+[,:]?|\.\.\.|)$")

SYSTEM = ("You write the natural-language prompts of a deep-learning code-generation "
          "benchmark. A prompt specifies one Python function (or method) so precisely that "
          "a model can implement it without seeing any code: its purpose, every input with "
          "its type and tensor shape, the output, the edge cases and errors. You never copy "
          "the implementation.")
TEMPLATE = """Write the prompt for the {what} below, in the style of DL-Bench:

"Generate a Python function called `NAME` that ..." followed by the inputs (names, types,
shapes, defaults), what it returns (type, shape, dtype), how it handles edge cases and
which errors it raises. Plain prose and short lists; keep the signature exact; do not
include the implementation or any line of its body.

Signature:
```python
{signature}
```
{context}
Docstring:
{docstring}

Code:
```python
{code}
```

Answer with the prompt only."""


class DraftRefused(CuratorError):
    """A model's draft gives the reference away."""


@dataclass
class Request:
    messages: list[dict]
    template_sha256: str
    body_lines: list[str]          # the reference body, for the copy check


def template_sha256() -> str:
    """Changes whenever the request's wording does (kept with every draft)."""
    return hashlib.sha256((SYSTEM + "\0" + TEMPLATE).encode()).hexdigest()


def _target(tree: ast.Module, qualname: str):
    cls_name, _, name = qualname.rpartition(".")
    scope = tree.body
    if cls_name:
        cls = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == cls_name),
                   None)
        scope = cls.body if cls is not None else []
    return next((s for s in scope if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and s.name == name), None)


def _body_without_docstring(node, lines: list[str]) -> list[str]:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(
            getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value,
                                                                           str):
        body = body[1:]
    if not body:
        return []
    start, end = body[0].lineno, body[-1].end_lineno or body[-1].lineno
    return lines[start - 1:end]


def build_request(module_text: str, qualname: str, kind: str) -> Request:
    """The messages for QUALNAME of `module_text` (its source and context only)."""
    try:
        tree = ast.parse(module_text)
    except (SyntaxError, ValueError) as exc:
        raise CuratorError(f"{qualname}: the code does not parse ({exc})") from None
    node = _target(tree, qualname)
    if node is None:
        raise CuratorError(f"{qualname} is not defined in the solution; nothing to draft from")
    lines = module_text.splitlines()
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    code = textwrap.dedent("\n".join(lines[start - 1:node.end_lineno]))
    context = drafts.context_for(module_text, qualname)
    parts = []
    if kind == "method" and context.class_header:
        parts.append("Class context:\n```python\n" + drafts.skeleton(
            drafts._signature(node), kind, context) + "\n```")
        if context.class_doc:
            parts.append(f"About the class:\n{context.class_doc}")
    if context.helpers:
        parts.append("Module helpers it may call:\n```python\n" + "\n".join(context.helpers)
                     + "\n```")
    what = "method" if kind == "method" else "function"
    ask = TEMPLATE.format(what=what, signature=drafts._signature(node),
                          context=("\n" + "\n\n".join(parts) + "\n") if parts else "",
                          docstring=drafts.docstring_text(ast.get_docstring(node)) or
                          "(none)", code=code)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ask}]
    return Request(messages, template_sha256(), _body_without_docstring(node, lines))


def _normal(line: str) -> str:
    return " ".join(line.strip().strip("`").split())


def copied_lines(draft: str, body_lines: list[str]) -> list[str]:
    """The longest run of consecutive non-trivial reference lines found, in order, as
    consecutive lines of the draft."""
    body = [_normal(x) for x in body_lines]
    body = [x for x in body if x and not x.startswith("#") and not _TRIVIAL.match(x)]
    text = [_normal(x) for x in draft.splitlines()]
    text = [x for x in text if x and not _TRIVIAL.match(x)]
    best: list[str] = []
    for i in range(len(body)):
        for j in range(len(text)):
            k = 0
            while i + k < len(body) and j + k < len(text) and body[i + k] == text[j + k]:
                k += 1
            if k > len(best):
                best = body[i:i + k]
    return best


def clean(answer: str) -> str:
    """The model's answer as prompt text: one surrounding markdown fence removed."""
    text = answer.strip()
    fenced = re.fullmatch(r"```(?:markdown|md|text)?\n(.*)\n```", text, re.DOTALL)
    return (fenced.group(1) if fenced else text).strip() + "\n"


def _module_of(problem: Problem) -> str:
    return problem.solution


def draft(store: Store, problem_id: str, client: ChatClient, model: str,
          module_text: str | None = None) -> dict:
    """Ask `model` for a prompt of a problem; store it as a draft (or refuse it).

    module_text: where the function's code and context come from (default: the problem's
    reference solution; accepting a candidate passes its upstream module)."""
    problem = problem_store.get(store, problem_id)
    request = build_request(module_text or _module_of(problem), problem.entry_point,
                            problem.kind)
    text = clean(client.chat(model, request.messages))
    copied = copied_lines(text, request.body_lines)
    source = f"model:{model}"
    if len(copied) >= MAX_COPIED_LINES:
        reason = (f"the draft copies {len(copied)} consecutive lines of the reference's "
                  f"body (from `{copied[0][:60]}`); drafts may not contain the answer")
        with store.transaction():
            store.audit("problem", problem.id, "draft_prompt_refused", source,
                        after={"model": model, "template_sha256": request.template_sha256,
                               "reason": reason})
        raise DraftRefused(f"problem {problem.id}: {model}'s prompt refused: {reason}")
    stamp = now()
    with store.transaction():
        if not any(d["source"] == DOCSTRING for d in draft_store.for_problem(store,
                                                                             problem.id)):
            draft_store.put(store, problem.id, DOCSTRING, problem.prompt, stamp)
        draft_store.put(store, problem.id, source, text, stamp, model,
                        request.template_sha256)
        store.audit("problem", problem.id, "draft_prompt", source,
                    after={"model": model, "template_sha256": request.template_sha256})
    return {"problem_id": problem.id, "source": source, "model": model,
            "template_sha256": request.template_sha256, "text": text}


def remember_docstring_draft(store: Store, problem_id: str, text: str) -> None:
    """Keep the docstring draft a new problem started with (inside the caller's transaction)."""
    draft_store.put(store, problem_id, DOCSTRING, text, now())


def drafts_of(store: Store, problem_id: str) -> list[dict]:
    """A problem's drafts: the docstring draft first, then each model's."""
    problem_store.get(store, problem_id)   # a missing problem is one clear error
    return draft_store.for_problem(store, problem_id)


def chosen_text(store: Store, problem_id: str, source: str) -> str:
    """The text of one draft (to put into the prompt and edit)."""
    for row in drafts_of(store, problem_id):
        if row["source"] == source:
            return row["text"]
    known = ", ".join(r["source"] for r in drafts_of(store, problem_id)) or "none"
    raise CuratorError(f"problem {problem_id} has no draft {source!r} (drafts: {known})")


def use(store: Store, problems_dir, problem_id: str, source: str) -> list[str]:
    """Make one draft the problem's prompt (database and prompt.md, audited); the fields
    that changed. The annotator edits it from there."""
    text = chosen_text(store, problem_id, source)
    problem = problem_store.get(store, problem_id)
    problem.prompt = text
    return sync.save_and_write(store, problem, problems_dir)


def use_text(store: Store, problems_dir, problem_id: str, text: str) -> list[str]:
    """Make `text` (a draft as the annotator edited it) the problem's prompt."""
    problem = problem_store.get(store, problem_id)
    problem.prompt = text if text.endswith("\n") else text + "\n"
    return sync.save_and_write(store, problem, problems_dir)


def draft_with_settings(store: Store, config: dict, problem_id: str,
                        module_text: str | None = None) -> dict:
    """`draft` with the endpoint and model of curator.toml's [llm] (the app's way)."""
    settings = EndpointSettings.from_config(config)
    client = settings.client()
    if client is None or not settings.model:
        raise CuratorError("no model configured: set [llm] base_url and model in "
                           "curator.toml (or use `curator problems draft-prompt --model`)")
    return draft(store, problem_id, client, settings.model, module_text)
