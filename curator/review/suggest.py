"""Suggested taxonomy categories for failing samples: rules on the log first, then a model.

A suggestion is never a label: it pre-fills the obvious cases for the annotator, who
accepts it with one key or labels something else; `record_outcome` notes which (table
`review_suggestions`), so `review stats` can report how often the first suggestion was
taken. Up to three categories per sample, best first, each with the evidence that fired.

Rules read the run's failure log (pytest output, the runner's reason), the sample's code
and the line the traceback points at in it:
- the code does not parse, or the log has a SyntaxError / IndentationError: 2;
- ModuleNotFoundError: 7 (a nonexistent module), then 15; ImportError of a name the
  library lacks: 8, then 15 (a DL library: missing DL modules);
- AttributeError on a module or a tensor: 8 incorrect API usage; on ``self``: 11;
- NameError: 7 (then 15 when the name is a well-known module alias: np, F, nn, ...);
- shape errors from tensor operations: 10 and 1 with the shape sub-categories;
- dtype errors: 6 data type casting; argument errors in calls: 6 / 8;
- a timeout, out-of-memory or RecursionError: 13; failed value assertions: 10, then 1
  and 12 (5 first when only tests of edge cases or errors fail).
Weak evidence (a generic TypeError, ValueError, IndexError) is followed by 1, the most
frequent category of DL-Bench's own labels.
A model, when an endpoint is configured, sees the prompt, the reference, the sample and
the log and answers in JSON; its categories follow the rules' (deduplicated).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from curator.errors import CuratorError
from curator.llm import ChatClient, LLMError
from curator.review.queue import ReviewItem, queue
from curator.store import Store, now
from curator.store import review_suggestions as suggestion_store
from curator.taxonomy import BUG, Taxonomy, current

MAX_SUGGESTIONS = 3
RULES = "rules"
LOG_CHARS = 6000     # of the failure log a model is shown

DL_MODULES = {"torch", "torchvision", "torchaudio", "tensorflow", "tf", "keras", "jax",
              "flax", "kornia", "pytorch3d", "cleanlab", "sklearn", "scikit-learn", "numpy",
              "np", "scipy", "nn", "F", "cv2", "PIL", "transformers", "timm", "deepchem",
              "gpflow", "pyro", "monai", "einops", "onnx", "pandas", "pd", "torchmetrics"}
MODULE_ALIASES = {"np", "torch", "F", "nn", "tf", "math", "pd", "plt", "cv2", "scipy", "os",
                  "sys", "random", "itertools", "functools", "collections", "re", "json",
                  "numpy", "optim", "Image", "kornia", "einops", "jnp", "jax", "keras"}
TENSOR_TYPES = ("Tensor", "ndarray", "Parameter", "Module", "Size", "Variable",
                "EagerTensor", "DataFrame")

_EXC = re.compile(r"^(?:E\s+|\S*?:\s)?\s*(?:[\w.]+\.)?(?P<type>[A-Z]\w*(?:Error|Exception|Exit)|"
                  r"AssertionError)(?::\s*(?P<msg>.*))?$", re.MULTILINE)
_SOLUTION_FRAME = re.compile(r'File "[^"]*(?:solution|generated|processed_)[^"]*\.py", line '
                             r"(\d+)|^[^\s:]*(?:solution|generated)[^\s:]*\.py:(\d+):",
                             re.MULTILINE)
_SHAPE = re.compile(r"size of tensor a \(\d+\) must match|mat1 and mat2 shapes cannot be "
                    r"multiplied|shapes? .* (?:cannot be multiplied|mismatch|not aligned|"
                    r"could not be broadcast)|Sizes of tensors must match|is invalid for input "
                    r"of size|Dimension out of range|expanded size of the tensor|"
                    r"Expected (?:\d+D|.*dimensions?)|must have the same shape|"
                    r"dimension specified as|non-singleton dimension|shape mismatch|"
                    r"Incompatible shapes|operands could not be broadcast|"
                    r"Given groups=\d+, weight of size|number of dims don't match|"
                    r"input.* doesn't match the broadcast shape|too many indices for tensor",
                    re.IGNORECASE)
_DTYPE = re.compile(r"expected scalar type|can't be cast to the desired output type|"
                    r"Expected object of scalar type|dtype|not implemented for '\w+'|"
                    r"Found dtype|must have the same dtype|result type \w+ can't be cast",
                    re.IGNORECASE)
_ARGS = re.compile(r"unexpected keyword argument|positional arguments? but \d+ (?:was|were) "
                   r"given|missing \d+ required (?:positional|keyword)|got multiple values for "
                   r"argument|takes no arguments|invalid combination of arguments|"
                   r"received an invalid combination", re.IGNORECASE)
_TYPE_MISMATCH = re.compile(r"must be (?:a )?Tensor|not (?:a )?list|unsupported operand "
                            r"type|can't convert|expected Tensor|argument '\w+' .* must be|"
                            r"object is not (?:callable|subscriptable|iterable)|"
                            r"only one element tensors|can only concatenate",
                            re.IGNORECASE)
_CLOSE = re.compile(r"Tensor-likes are not close|not close|assert_allclose|allclose|"
                    r"Mismatched elements|Greatest absolute difference|assert .* == |"
                    r"AssertionError", re.IGNORECASE)
_SHAPE_ASSERT = re.compile(r"torch\.Size\(\[|\.shape ==|shape \(|Shapes? .* (?:do not|don't) "
                           r"match|The values for attribute 'shape' do not match",
                           re.IGNORECASE)
# curator.execution.boundary's ImportError for a solution module that raised on import
_IMPORT_WRAPPER = re.compile(r"the solution did not import: (?:[\w.]+\.)?"
                             r"(?P<type>[A-Z]\w*(?:Error|Exception|Exit))(?::\s*(?P<msg>.*))?$")
_EDGE_TESTS = re.compile(r"empty|edge|zero|_nan|_inf|degenerate|corner|boundary|raises|"
                         r"invalid|errors?$|errors?_", re.IGNORECASE)


@dataclass(frozen=True)
class Suggestion:
    category: str            # top-level id, "1".."15"
    dl: str                  # DL sub-category id ("not-dl" when nothing DL-specific)
    evidence: str
    source: str = RULES      # "rules" or "model:NAME"
    also: tuple[str, ...] = ()   # other sources that named the same category
    model_rank: int | None = None   # its place in the model's own answer (0 first)

    def to_store(self) -> dict:
        data = {"category": self.category, "dl": self.dl, "evidence": self.evidence,
                "source": self.source}
        if self.also:
            data["also"] = list(self.also)
        if self.model_rank is not None:
            data["model_rank"] = self.model_rank
        return data

    @classmethod
    def from_store(cls, data: dict) -> Suggestion:
        rank = data.get("model_rank")
        return cls(str(data["category"]), str(data.get("dl") or "not-dl"),
                   str(data.get("evidence") or ""), str(data.get("source") or RULES),
                   tuple(str(a) for a in data.get("also") or ()),
                   int(rank) if rank is not None else None)

    def named_by(self, prefix: str) -> bool:
        """Did a source starting with `prefix` ("rules", "model:") suggest this category?"""
        return any(s.startswith(prefix) for s in (self.source, *self.also))


def sub_name(taxonomy: Taxonomy, dl: str) -> str:
    """The DL sub-category as people write it ("incorrect API usage", "not DL-related")."""
    try:
        name = taxonomy.dl_category(dl).name
    except CuratorError:
        return dl
    return name[:1].lower() + name[1:]


def to_json(taxonomy: Taxonomy, suggestion: Suggestion) -> dict:
    category: int | str = int(suggestion.category) if suggestion.category.isdigit() \
        else suggestion.category
    return {"id": category, "sub": sub_name(taxonomy, suggestion.dl),
            "evidence": suggestion.evidence}


# -- rules -------------------------------------------------------------------------------------


def _exceptions(log: str) -> list[tuple[str, str, str]]:
    """(type, message, the log line) of every exception line, in order. pytest's location
    lines ("test_x.py:12: AssertionError") carry no message and are left out when the same
    exception is also spelled out; `assert ...` lines count as AssertionError."""
    out = []
    for raw in log.splitlines():
        text = raw.strip()
        assertion = re.match(r"^E\s+(assert .*|AssertionError.*)$", text)
        if assertion:
            out.append(("AssertionError", assertion.group(1), assertion.group(1)[:300]))
            continue
        if re.match(r"^E\s+Failed: DID NOT RAISE", text):
            out.append(("DidNotRaise", text[1:].strip(), text[1:].strip()))
            continue
        match = _EXC.match(text)
        if not match:
            continue
        line = " ".join(match.group(0).split())
        line = re.sub(r"^E\s+", "", line)
        message = (match.group("msg") or "").strip()
        if not message and re.match(r"^\S+\.py:\d+: ", line):
            continue          # a location line: the exception itself is spelled out above
        out.append((match.group("type"), message, line))
    return out


_SECTION = re.compile(r"^_{3,} (?:ERROR (?:at \w+ of |collecting )?)?([\w.\[\]:/-]+) _{3,}\s*$",
                      re.MULTILINE)


def _sections(log: str) -> list[tuple[str, str]]:
    """The log cut at pytest's "____ test_name ____" headers: (test name or "", text)."""
    cuts = list(_SECTION.finditer(log))
    if not cuts:
        return [("", log)]
    out = [("", log[:cuts[0].start()])]
    for position, cut in enumerate(cuts):
        end = cuts[position + 1].start() if position + 1 < len(cuts) else len(log)
        out.append((cut.group(1), log[cut.end():end]))
    return out


def _offending_line(log: str, code: str) -> str:
    """The sample's line the traceback points at last (or a `>` line pytest marks)."""
    lines = code.splitlines()
    numbers = [int(a or b) for a, b in _SOLUTION_FRAME.findall(log)]
    for number in reversed(numbers):
        if 0 < number <= len(lines):
            return lines[number - 1].strip()
    marked = [m.group(1).strip() for m in re.finditer(r"^>\s+(.*)$", log, re.MULTILINE)]
    return marked[-1] if marked else ""


def _dl_name(name: str) -> bool:
    return name.split(".")[0] in DL_MODULES


def _syntax(code: str | None) -> str | None:
    if not code:
        return None
    try:
        ast.parse(code)
    except SyntaxError as exc:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def _from_exception(kind: str, message: str, line: str, offending: str, item: ReviewItem,
                    add: Callable[[str, str, str, int], None]) -> None:
    """Findings of one exception line (add(category, dl, evidence, rank))."""
    wrapped = _IMPORT_WRAPPER.match(message) if kind == "ImportError" else None
    if wrapped:
        # the engine's report of a solution that failed while importing: the error inside
        # is the finding (a SyntaxError there is no missing module)
        kind, message = wrapped.group("type"), (wrapped.group("msg") or "").strip()
        line = f"{kind}: {message}" if message else kind
    if kind in ("SyntaxError", "IndentationError", "TabError"):
        add("2", "not-dl", line, 0)
    elif kind in ("ModuleNotFoundError", "ImportError"):
        module = re.search(r"No module named '([\w.]+)'|from '([\w.]+)'", message)
        name = next((g for g in module.groups() if g), "") if module else ""
        dl = _dl_name(name)
        if "cannot import name" in message:
            # a name the library does not have: a nonexistent API (8) before the import
            add("8", "dl-api-usage" if dl else "not-dl", line, 1)
            add("15", "missing-dl-module" if dl else "not-dl", line, 2)
            add("1", "not-dl", line, 12)
        else:
            # a module that does not exist is a nonexistent object (7), then a wrong import
            add("7", "missing-dl-module" if dl else "not-dl", line, 1)
            add("15", "missing-dl-module" if dl else "not-dl", line, 2)
            add("8", "not-dl", line, 3)
    elif kind == "AttributeError":
        target = re.match(r"(?:module|type object) '([\w.]+)' has no attribute|"
                          r"'(\w+)' object has no attribute", message)
        owner = next((g for g in target.groups() if g), "") if target else ""
        if "'NoneType'" in message:
            add("10", "not-dl", line, 3)
            add("11", "not-dl", line, 4)
        elif re.search(r"\bself\.", offending) and owner not in TENSOR_TYPES \
                and not _dl_name(owner):
            add("11", "not-dl", line, 3)
            add("8", "not-dl", line, 4)
        else:
            add("8", "dl-api-usage" if _dl_name(owner) or owner in TENSOR_TYPES else "not-dl",
                line, 3)
            add("1", "not-dl", line, 12)
    elif kind in ("NameError", "UnboundLocalError"):
        found = re.search(r"name '(\w+)' is not defined|variable '(\w+)'", message)
        name = next((g for g in found.groups() if g), "") if found else ""
        # The taxonomy's 7 includes "a module that was not imported"; 15 (wrong import)
        # is the runner-up for those.
        module = name in MODULE_ALIASES
        add("7", "missing-dl-module" if module and _dl_name(name) else "not-dl", line, 2)
        if module:
            add("15", "missing-dl-module" if _dl_name(name) else "not-dl", line, 3)
        add("11", "not-dl", line, 4)
    elif _SHAPE.search(message):
        add("10", "shape-in-operation", line, 5)
        add("1", "shape-dimension", line, 6)
    elif kind in ("RuntimeError", "TypeError", "ValueError") and _DTYPE.search(message):
        add("6", "dtype-casting", line, 5)
        add("3", "dtype-casting", line, 6)
    elif kind == "TypeError" and _ARGS.search(message):
        callee = offending.split("(")[0].split("=")[-1].strip()
        dl = _dl_name(callee) or "torch." in offending
        add("6", "dl-function-arguments" if dl else "not-dl", line, 5)
        add("8", "dl-function-arguments" if dl else "not-dl", line, 6)
    elif kind == "TypeError":
        add("6", "type-mismatch", line, 5)
        add("1", "not-dl", line, 12)
    elif kind == "IndexError":
        add("10", "shape-dimension" if "dimension" in message else "not-dl", line, 7)
        add("1", "shape-dimension" if "dimension" in message else "not-dl", line, 9)
        add("5", "not-dl", line, 12)
    elif kind in ("ZeroDivisionError", "FloatingPointError", "OverflowError"):
        add("5", "tensor-edge-cases", line, 7)
    elif kind == "RecursionError":
        add("13", "not-dl", line, 6)
        add("10", "not-dl", line, 7)
    elif kind == "NotImplementedError":
        add("1", "not-dl", line, 7)
    elif kind == "KeyError":
        add("11", "not-dl", line, 7)
    elif kind == "DidNotRaise":
        add("5", "not-dl", line, 12)
    elif kind == "AssertionError" and re.search(r"dtype|torch\.(?:u?int|float|bool)\d*\b == ",
                                                message):
        add("3", "dtype-casting", line, 8)
        add("6", "dtype-casting", line, 9)
    elif kind == "AssertionError" and _SHAPE_ASSERT.search(message):
        add("1", "shape-dimension", line, 8)
        add("10", "shape-in-operation", line, 9)
    elif kind == "AssertionError" or _CLOSE.search(message):
        failing = [str(t.get("id") or "") for t in item.failing_tests]
        edge_only = bool(failing) and all(_EDGE_TESTS.search(t.split("::")[-1])
                                          for t in failing)
        add("5" if edge_only else "10",
            "tensor-edge-cases" if edge_only else "algebraic-calculation", line, 10)
        add("10" if edge_only else "1",
            "algebraic-calculation" if edge_only else "not-dl", line, 11)
        add("12", "tensor-constant", line, 12)
        add("5", "tensor-edge-cases", line, 12)
    elif kind == "ValueError":
        add("6", "not-dl", line, 8)
        add("1", "not-dl", line, 10)
        add("5", "not-dl", line, 12)


def rule_suggestions(item: ReviewItem) -> list[Suggestion]:
    """Categories from the failure log and the code alone (no model), best first: the
    most specific finding of any failing test comes first (a NameError in one test beats
    a wrong value in another)."""
    log = "\n".join(x for x in (item.test_output, item.reason) if x)
    code = item.code or ""
    found: dict[str, tuple[int, int, Suggestion]] = {}
    order = [0]

    def add(category: str, dl: str, evidence: str, rank: int) -> None:
        order[0] += 1
        if category not in found or found[category][0] > rank:
            found[category] = (rank, order[0], Suggestion(category, dl, evidence[:300]))

    syntax = _syntax(code)
    if syntax:
        add("2", "not-dl", syntax, 0)
    if item.outcome in ("timeout", "oom"):
        add("13", "not-dl", item.reason or f"the run ended in {item.outcome}", 1)
    offending = _offending_line(log, code)
    for test, section in _sections(log):
        # A failure in a test of edge cases or error handling says less about the main
        # bug than one in a test of the main path: it ranks after them, as an edge case.
        edge = bool(test) and bool(_EDGE_TESTS.search(test))
        for kind, message, line in _exceptions(section):
            if edge and kind not in ("SyntaxError", "ImportError", "ModuleNotFoundError",
                                     "NameError", "AttributeError"):
                add("5", "tensor-edge-cases", f"{test}: {line}", 13)
                _from_exception(kind, message, line, offending, item,
                                lambda c, d, e, r: add(c, d, e, r + 10))
            else:
                _from_exception(kind, message, line, offending, item, add)
    if not found and item.failing_tests and item.outcome == "failed":
        tests = ", ".join(str(t.get("id")) for t in item.failing_tests[:2])
        add("1", "not-dl", f"failing tests without an exception line: {tests}", 10)
        add("9", "not-dl", f"failing tests without an exception line: {tests}", 11)
        add("10", "not-dl", f"failing tests without an exception line: {tests}", 12)
    ranked = sorted(found.values(), key=lambda entry: (entry[0], entry[1]))
    return [entry[2] for entry in ranked[:MAX_SUGGESTIONS]]


# -- a model -----------------------------------------------------------------------------------

MODEL_SYSTEM = ("You review failing code samples of a deep-learning code-generation benchmark "
                "and classify each failure in a fixed bug taxonomy. Answer only with JSON.")


def model_messages(item: ReviewItem, taxonomy: Taxonomy) -> list[dict]:
    cats = "\n".join(f"{c.id}. {c.name}: {c.definition}" for c in taxonomy.categories)
    subs = "\n".join(f"{c.id}: {c.name}" for c in taxonomy.dl_categories)
    log = (item.test_output or "")[-LOG_CHARS:]
    ask = (f"Categories:\n{cats}\n\nDL-specific sub-categories:\n{subs}\n\n"
           f"Prompt given to the model:\n{item.prompt}\n\nReference solution:\n```python\n"
           f"{item.reference}\n```\n\nThe model's code:\n```python\n{item.code or item.raw}\n"
           f"```\n\nRunner's reason: {item.reason}\n\nTest log (end):\n```\n{log}\n```\n\n"
           'Answer with JSON: {"categories": [{"id": 8, "sub": "dl-api-usage", '
           '"evidence": "the log line or code that shows it"}]}, at most 3, most likely '
           "first.")
    return [{"role": "system", "content": MODEL_SYSTEM}, {"role": "user", "content": ask}]


def template_hash() -> str:
    """Changes when the model's request template changes (stored with its answers)."""
    probe = ReviewItem(0, "p", "m", "t", 0, "failed")
    from_template = json.dumps(model_messages(probe, _EMPTY_TAXONOMY), sort_keys=True)
    return hashlib.sha256(from_template.encode()).hexdigest()[:16]


def parse_model_answer(text: str, taxonomy: Taxonomy, model: str) -> list[Suggestion]:
    """The categories of a model's JSON answer that name real taxonomy entries."""
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if not match:
        return []
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError:
        return []
    out = []
    for entry in data.get("categories") or [] if isinstance(data, dict) else []:
        if not isinstance(entry, dict):
            continue
        category = str(entry.get("id", "")).strip().split(".")[0]
        if category not in {c.id for c in taxonomy.categories}:
            continue
        dl = str(entry.get("sub") or "not-dl").strip()
        if dl not in {c.id for c in taxonomy.dl_categories}:
            by_name = {c.name.lower(): c.id for c in taxonomy.dl_categories}
            dl = by_name.get(dl.lower(), "not-dl")
        out.append(Suggestion(category, dl, str(entry.get("evidence") or "")[:300],
                              f"model:{model}", model_rank=len(out)))
    return out


def merge(first: list[Suggestion], second: list[Suggestion]) -> list[Suggestion]:
    """`first`'s categories, then `second`'s new ones, at most three; a category both name
    is kept once, noting the other source in `also` (the app shows each source's list)."""
    out: list[Suggestion] = []
    for suggestion in [*first, *second]:
        index = next((i for i, s in enumerate(out) if s.category == suggestion.category), None)
        if index is None:
            out.append(suggestion)
        elif suggestion.source != out[index].source and \
                suggestion.source not in out[index].also:
            kept = out[index]
            rank = kept.model_rank if kept.model_rank is not None else suggestion.model_rank
            out[index] = Suggestion(kept.category, kept.dl, kept.evidence, kept.source,
                                    (*kept.also, suggestion.source), rank)
    return out[:MAX_SUGGESTIONS]


def by_source(suggestions: list[Suggestion]) -> tuple[list[Suggestion], list[Suggestion]]:
    """(the rules' suggestions, the model's), each in its own order, from a merged list."""
    from_model = [s for s in suggestions if s.named_by("model:")]
    from_model.sort(key=lambda s: (s.model_rank is None, s.model_rank or 0))
    return [s for s in suggestions if s.named_by(RULES)], from_model


def model_source(model: str) -> str:
    """The stored source of suggestions that asked `model` with today's template."""
    return f"model:{model}:{template_hash()}"


def asked_model(store: Store, sample_id: int, model: str) -> bool:
    """Has `model` already answered for this sample (same template)? Then asking again
    costs nothing: `for_item` uses the stored answer."""
    row = suggestion_store.get(store, sample_id)
    return bool(row) and row["source"] == model_source(model)


# -- the queue ---------------------------------------------------------------------------------


@dataclass
class SampleSuggestions:
    sample_id: int
    problem_id: str
    categories: list[Suggestion]

    def to_json(self, taxonomy: Taxonomy) -> dict:
        return {"sample_id": self.sample_id, "problem_id": self.problem_id,
                "categories": [to_json(taxonomy, s) for s in self.categories]}


def for_item(store: Store, item: ReviewItem, client: ChatClient | None = None,
             model: str | None = None, taxonomy: Taxonomy | None = None,
             raise_errors: bool = False) -> SampleSuggestions:
    """One item's suggestions (stored for `record_outcome`); a model's answer is kept too,
    so asking again with the same model and template costs nothing. A failed model call
    leaves the rules' suggestions, or with `raise_errors` raises LLMError (the app shows
    it) and stores nothing."""
    taxonomy = taxonomy or current(store)
    rules = rule_suggestions(item)
    from_model: list[Suggestion] = []
    source = RULES
    if client is not None and model:
        source = model_source(model)
        stored = suggestion_store.get(store, item.sample_id)
        if stored and stored["source"] == source:
            _, kept = by_source([Suggestion.from_store(s) for s in stored["suggestions"]])
            from_model = [Suggestion(s.category, s.dl, s.evidence, f"model:{model}",
                                     model_rank=s.model_rank) for s in kept]
        else:
            try:
                text = client.chat(model, model_messages(item, taxonomy))
            except LLMError:
                if raise_errors:
                    raise
                text = ""
            from_model = parse_model_answer(text, taxonomy, model)
    chosen = merge(rules, from_model)
    suggestion_store.put(store, item.sample_id, [s.to_store() for s in chosen], source, now())
    return SampleSuggestions(item.sample_id, item.problem_id, chosen)


def suggest(store: Store, sample_ids: list[int] | None = None, client: ChatClient | None = None,
            model: str | None = None) -> list[SampleSuggestions]:
    """Suggestions for every failing sample of the queue (or the given ones), in queue order."""
    items = queue(store, None)
    if sample_ids:
        known = {i.sample_id: i for i in items}
        missing = [str(i) for i in sample_ids if int(i) not in known]
        if missing:
            raise CuratorError(f"sample(s) {', '.join(missing)} not in the review queue "
                               "(passed, not evaluated, or its reference does not pass)")
        items = [known[int(i)] for i in sample_ids]
    taxonomy = current(store)
    return [for_item(store, item, client, model, taxonomy) for item in items]


def stored(store: Store, sample_id: int) -> list[Suggestion]:
    row = suggestion_store.get(store, sample_id)
    return [Suggestion.from_store(s) for s in row["suggestions"]] if row else []


def record_outcome(store: Store, sample_id: int, annotator: str, verdict: str,
                   categories: tuple[str, ...], accepted_key: bool = False) -> None:
    """After a label is saved: was the first suggestion taken (or overridden)? No
    suggestions shown: nothing to record. Called inside the label's transaction."""
    shown = stored(store, sample_id)
    if not shown:
        return
    first = shown[0].category
    main = categories[0] if verdict == BUG and categories else verdict
    suggestion_store.record_use(store, sample_id, annotator, first,
                                [s.category for s in shown], main,
                                main == first, accepted_key, now())


def precision(store: Store, sample_ids: set[int] | None = None) -> dict:
    """How often the first suggestion was the annotator's main category (and any of the 3)."""
    rows = [r for r in suggestion_store.all_uses(store)
            if sample_ids is None or r["sample_id"] in sample_ids]
    decided = len(rows)
    accepted = sum(1 for r in rows if r["accepted"])
    in_top3 = sum(1 for r in rows if r["chosen"] in r["shown"])
    return {"decided": decided, "accepted": accepted, "overridden": decided - accepted,
            "by_key": sum(1 for r in rows if r["by_key"]),
            "precision": round(accepted / decided, 4) if decided else None,
            "top3": round(in_top3 / decided, 4) if decided else None}


class _EmptyTaxonomy:
    categories: tuple = ()
    dl_categories: tuple = ()


_EMPTY_TAXONOMY = _EmptyTaxonomy()
