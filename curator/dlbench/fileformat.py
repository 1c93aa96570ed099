"""The original DL-Bench release formats: `.txt` files and the CSV form (labels: label_map).

Pure functions: text in, records out (no store, no files written). See docs/ARCHITECTURE.md#file-formats.

A `.txt` file is a sequence of `key: value` blocks. A key counts only when it starts a
line with at most two leading spaces (so indented code in a prompt that happens to
contain `data:` stays part of the prompt); a value runs until the next key. Keys:
stage, task, data, prompt, ground Truth, repo, function (legacy f_name), class,
test_cases. Label values are free text with typos and case variants; an empty task
means General and an empty data means Others; in class files the stage and data values
are swapped (detected from the vocabulary, so a class file that is not swapped is read
as it is). Unknown spellings are reported, never dropped silently.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

from curator.dlbench import label_map
from curator.limits import DEFAULT, csv_rows

CSV_COLUMNS = ("repo", "filename", "function", "class", "ground Truth", "test_cases",
               "prompt", "stage", "task", "data")

KEY_NAMES = {
    "stage": "stage", "task": "task", "data": "data", "prompt": "prompt",
    "ground truth": "ground_truth", "groundtruth": "ground_truth", "ground_truth": "ground_truth",
    "repo": "repo", "function": "function", "f_name": "function", "class": "class",
    "test_cases": "test_cases", "test cases": "test_cases",
}
_KEY_LINE = re.compile(
    r"^ {0,2}(" + "|".join(re.escape(k) for k in sorted(KEY_NAMES, key=len, reverse=True))
    + r")[ \t]*:(.*)$", re.IGNORECASE)
_NEWLINE = re.compile(r"\r\n|\r|\n")
_CSV_KEYS = {**KEY_NAMES, "filename": "filename"}  # the CSV form also names each row


@dataclass
class Record:
    """One DL-Bench problem as written in the release, before mapping."""
    origin: str                       # the file name (the only unique key in DL-Bench)
    fields: dict[str, str] = field(default_factory=dict)   # canonical key -> raw value
    notes: list[str] = field(default_factory=list)

    @property
    def is_class(self) -> bool:
        return bool(self.fields.get("class", "").strip()) or \
            self.origin.rsplit("/", 1)[-1].startswith("classes-")


def parse_txt(text: str, origin: str) -> Record:
    """Read one `.txt` problem file into its key -> value blocks."""
    record = Record(origin)
    blocks: list[tuple[str | None, list[str]]] = [(None, [])]  # None: before the first key
    for line in _NEWLINE.split(text):
        match = _KEY_LINE.match(line)
        if match:
            blocks.append((KEY_NAMES[match.group(1).lower()], [match.group(2)]))
        else:
            blocks[-1][1].append(line)
    (_, preamble), *keyed = blocks
    for key, lines in keyed:
        if key in record.fields:
            record.notes.append(f"duplicate key {key!r}: the first value is kept")
        else:
            record.fields[key] = "\n".join(lines).strip()
    if "".join(preamble).strip():
        record.notes.append("text before the first key was ignored")
    return record


def parse_csv(text: str, origin: str, field_limit: int = DEFAULT.archive_member_bytes
              ) -> tuple[list[Record], list[dict]]:
    """Read the CSV form; returns its records and the rows that could not be read
    (fields up to `field_limit` characters; a malformed row is skipped, not the file)."""
    reader = iter(csv_rows(text.removeprefix("\ufeff"), field_limit))
    try:
        header_line, header = next(reader)
    except StopIteration:
        return [], [{"file": origin, "reason": "empty CSV file"}]
    if isinstance(header, str):
        return [], [{"file": f"{origin}:{header_line}", "reason": header}]
    columns = {}
    for index, name in enumerate(header):
        if (key := _CSV_KEYS.get(name.strip().lower())) is not None:
            columns[index] = key
    if "prompt" not in columns.values():
        return [], [{"file": origin, "reason": "CSV header has no prompt column; expected "
                     + ", ".join(CSV_COLUMNS)}]
    records, errors = [], []
    # Rows are numbered by record (header = 1), as ids of unnamed rows have always been.
    for line_no, (_physical, row) in enumerate(reader, start=2):
        if isinstance(row, str):
            errors.append({"file": f"{origin}:{line_no}", "reason": row})
            continue
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header):
            errors.append({"file": f"{origin}:{line_no}",
                           "reason": f"{len(row)} cells but the header has {len(header)}"})
            continue
        values = {columns[i]: cell for i, cell in enumerate(row) if i in columns}
        name = values.pop("filename", "").strip()
        record = Record(name or f"{origin}:{line_no}")
        record.fields = {k: v.strip() for k, v in values.items()}
        records.append(record)
    return records, errors


_ANCHOR = re.compile(r"#L(\d+)(?:-L?(\d+))?$")
_GITHUB = re.compile(r"^https?://github\.com/([^/]+)/([^/]+)/(?:blob|tree)/([^/]+)/(.+)$")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_RANGE_DASH = re.compile(r"\s*-\s*L?")  # `12-40`, `12 - 40`, `12-L40` -> `12-L40`
_LEADING_DIRS = re.compile(r"^(?:\.?/)+")  # `./x.py`, `/x.py`


@dataclass
class GroundTruth:
    path: str
    lines: str | None = None
    repo_url: str | None = None
    ref: str | None = None


def parse_ground_truth(value: str) -> GroundTruth:
    """`kornia/color/gray.py#L12-L40` -> path and lines; a GitHub blob URL also gives the repo."""
    value = value.strip().split()[0] if value.strip() else ""
    lines = None
    match = _ANCHOR.search(value)
    if match:
        lines = match.group(1) + (f"-{match.group(2)}" if match.group(2) else "")
        value = value[:match.start()]
    value = value.partition("#")[0]
    url = _GITHUB.match(value)
    if url:
        owner, name, ref, path = url.groups()
        return GroundTruth(path, lines, f"https://github.com/{owner}/{name}", ref)
    return GroundTruth(_LEADING_DIRS.sub("", value), lines)


def is_commit(ref: str | None) -> bool:
    return bool(ref and _SHA.match(ref))


_NODE_ID = re.compile(r"[^\s,'\"]+")


def node_ids(value: str) -> list[str]:
    """test_cases: pytest targets separated by spaces or commas (quotes dropped), kept in
    order without duplicates."""
    return list(dict.fromkeys(_NODE_ID.findall(value)))


def identifier(value: str) -> str | None:
    """The Python name in a function/class value (`foo()`, ` Foo ` -> name); None if none."""
    value = value.strip()
    match = re.match(r"^(?:def\s+|class\s+)?([A-Za-z_]\w*)\s*(?:\(.*\))?\s*:?$", value)
    if match:
        return match.group(1)
    return None


# Upstream projects of the original benchmark, by the name its `repo` field uses.
# Values: (repository URL, framework). Extend or override with [dlbench.repos] in
# curator.toml (name = "url").
KNOWN_REPOS = {
    "kornia": ("https://github.com/kornia/kornia", "pytorch"),
    "vision": ("https://github.com/pytorch/vision", "pytorch"),
    "torchvision": ("https://github.com/pytorch/vision", "pytorch"),
    "scikit-learn": ("https://github.com/scikit-learn/scikit-learn", "scikit-learn"),
    "pytorch3d": ("https://github.com/facebookresearch/pytorch3d", "pytorch"),
    "cleanlab": ("https://github.com/cleanlab/cleanlab", "scikit-learn"),
    "ignite": ("https://github.com/pytorch/ignite", "pytorch"),
    "imagededup": ("https://github.com/idealo/imagededup", "pytorch"),
    "lightly": ("https://github.com/lightly-ai/lightly", "pytorch"),
    "pennylane": ("https://github.com/PennyLaneAI/pennylane", "pennylane"),
    "pfrl": ("https://github.com/pfnet/pfrl", "pytorch"),
    "stanza": ("https://github.com/stanfordnlp/stanza", "pytorch"),
    "umap": ("https://github.com/lmcinnes/umap", "numpy"),
    "gpflow": ("https://github.com/GPflow/GPflow", "tensorflow"),
    "deepreg": ("https://github.com/DeepRegNet/DeepReg", "tensorflow"),
    "avalanche": ("https://github.com/ContinualAI/avalanche", "pytorch"),
    "deepchem": ("https://github.com/deepchem/deepchem", "pytorch"),
    "pyro": ("https://github.com/pyro-ppl/pyro", "pytorch"),
    "pyod": ("https://github.com/yzhao062/pyod", "scikit-learn"),
    "nncf": ("https://github.com/openvinotoolkit/nncf", "pytorch"),
    "small-text": ("https://github.com/webis-de/small-text", "pytorch"),
    "neurodiffeq": ("https://github.com/NeuroDiffGym/neurodiffeq", "pytorch"),
    "laplace": ("https://github.com/aleximmer/Laplace", "pytorch"),
    "emukit": ("https://github.com/EmuKit/emukit", "numpy"),
    "neupy": ("https://github.com/itdxer/neupy", "numpy"),
    "pytorch-widedeep": ("https://github.com/jrzaurin/pytorch-widedeep", "pytorch"),
    "torchgeo": ("https://github.com/microsoft/torchgeo", "pytorch"),
    "sparseml": ("https://github.com/neuralmagic/sparseml", "pytorch"),
    "pytorch": ("https://github.com/pytorch/pytorch", "pytorch"),
    "recommenders": ("https://github.com/recommenders-team/recommenders", "tensorflow"),
    "inference": ("https://github.com/roboflow/inference", "pytorch"),
    "pytorch-forecasting": ("https://github.com/sktime/pytorch-forecasting", "pytorch"),
    "compressai": ("https://github.com/InterDigitalInc/CompressAI", "pytorch"),
    "nlp-architect": ("https://github.com/IntelLabs/nlp-architect", "tensorflow"),
    "deepchecks": ("https://github.com/deepchecks/deepchecks", "scikit-learn"),
}


# URL -> DL-Bench's name; the first name of a URL wins (vision, not torchvision).
_SHORT_NAMES = {url.lower(): name for name, (url, _fw) in reversed(KNOWN_REPOS.items())}
_REPO_TAIL = re.compile(r"(?:\.git)?/*$")


def repo_short_name(repo: str) -> str:
    """The name DL-Bench uses for a repository (`https://github.com/pytorch/vision` -> `vision`)."""
    repo = _REPO_TAIL.sub("", repo)
    return _SHORT_NAMES.get(repo.lower(), repo.rpartition("/")[2])


def export_row(problem, filename: str) -> dict[str, str]:
    """One CSV row (CSV_COLUMNS) for a problem, with DL-Bench's label spellings.

    Self-contained problems have no upstream repository: `repo` is empty, `ground Truth`
    and `test_cases` point at the problem's own files in the workspace.
    """
    source = problem.source or {}
    if source.get("path"):
        lines = _RANGE_DASH.sub("-L", str(source.get("lines") or "").strip())
        ground = source["path"] + (f"#L{lines}" if lines else "")
    else:
        ground = f"problems/{problem.id}/solution.py"
    if problem.test_node_ids:
        tests = " ".join(problem.test_node_ids)
    else:
        tests = f"problems/{problem.id}/test_solution.py"
    return {
        "repo": repo_short_name(source["repo"]) if source.get("repo") else "",
        "filename": filename,
        "function": problem.function_name,
        "class": problem.class_name or "",
        "ground Truth": ground,
        "test_cases": tests,
        "prompt": problem.prompt,
        "stage": label_map.EXPORT_SPELLINGS["stage"].get(problem.stage, problem.stage),
        "task": label_map.EXPORT_SPELLINGS["task"].get(problem.task, problem.task),
        "data": label_map.EXPORT_SPELLINGS["data"].get(problem.data, problem.data),
    }


def render_csv(rows: list[dict[str, str]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def render_txt(row: dict[str, str], swap_class_labels: bool = True) -> str:
    """A DL-Bench `.txt` file for a CSV row (class files swap stage and data, as upstream)."""
    stage, data = row["stage"], row["data"]
    if row["class"] and swap_class_labels:
        stage, data = data, stage
    parts = [f"stage: {stage}", f"task: {row['task']}", f"data: {data}", "",
             f"prompt:\n{row['prompt'].strip()}", "", f"ground Truth:{row['ground Truth']}", "",
             f"repo:{row['repo']}", "", f"function:{row['function']}", ""]
    if row["class"]:
        parts += [f"class:{row['class']}", ""]
    parts += [f"test_cases:{row['test_cases']}", ""]
    return "\n".join(parts)
