"""DL-Bench's label spellings -> our slugs, and back (the published names).

Label values in the release are free text with typos and case variants; an empty task
means General and an empty data means Others; in class files the stage and data values
are swapped (detected from the vocabulary). Unknown spellings are reported, never dropped.
The table is in docs/dlbench-labels.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# How DL-Bench spells our labels when it writes them (the published names).
EXPORT_SPELLINGS = {
    "stage": {"prepost": "Pre/Post Processing", "model": "Model Construction",
              "training": "Training", "inference": "Inference",
              "evaluation": "Evaluation & Metrics"},
    "task": {"classification": "Classification", "regression": "Regression",
             "detection": "Object Detection", "segmentation": "Image Segmentation",
             "timeseries": "Time Series Prediction", "recommendation": "Recommendation",
             "general": "General"},
    "data": {"image": "Image", "text": "Text", "tabular": "Structured Array",
             "other": "Others"},
}

# Every spelling seen or expected in the wild, compacted by `spelling_key`.
_SPELLINGS = {
    "stage": {
        "prepost": ["pre/post processing", "pre-post processing", "pre post processing",
                    "preprocessing", "pre-processing", "postprocessing", "post-processing",
                    "pre/postprocessing", "pre and post processing", "prepost",
                    "pre-post-processing", "data preprocessing", "pre/post-processing",
                    "pre-post process", "pre/post process"],
        "model": ["model construction", "model", "model constructions", "model building",
                  "model contruction", "model construcion", "modelconstruction",
                  "model architecture"],
        "training": ["training", "train", "trainig", "model training"],
        "inference": ["inference", "infer", "inferance", "prediction", "model inference"],
        "evaluation": ["evaluation & metrics", "evaluating&metrics", "evaluation and metrics",
                       "evaluating & metrics", "evaluation", "metrics", "evaluation metrics",
                       "evaluating metrics", "evaluation&metric", "evaluation & metric",
                       "evaluating", "evalutation & metrics"],
    },
    "task": {
        "classification": ["classification", "classififcation", "classfication",
                           "clasification", "classifcation", "classificaiton",
                           "image classification", "text classification", "classificatoin"],
        "regression": ["regression", "regresion", "regressions"],
        "detection": ["object detection", "detection", "objectdetection", "object detecion"],
        "segmentation": ["image segmentation", "segmentation", "image segmantation",
                         "semantic segmentation"],
        "timeseries": ["time series prediction", "time series", "time-series prediction",
                       "timeseries", "time series forecasting", "time-series",
                       "timeseries prediction", "forecasting",
                       # DL-Bench's annotators wrote the last word of a task's name
                       # (Detection, Segmentation), so a bare "Prediction" is this one.
                       "prediction"],
        "recommendation": ["recommendation", "recommendations", "recommender",
                           "recommendation system", "recommender system", "recomendation"],
        "general": ["general", "generic", "none", "n/a"],
    },
    "data": {
        "image": ["image", "images", "img", "image data", "imgae"],
        "text": ["text", "texts", "textual", "text data", "nlp"],
        "tabular": ["structured array", "structured arrays", "table", "tables", "tabular",
                    "tabular data", "structured data", "structured", "structure array",
                    "structured-array", "array", "arrays"],
        # Time series are neither images, text nor tables in DL-Bench's published counts
        # (image 238, text 28, structured 84 over 520 files), so they are Others.
        "other": ["others", "other", "none", "n/a", "misc", "timeseries", "time series"],
    },
}
# An empty value means this (docs/ARCHITECTURE.md#file-formats); an empty stage has no default.
EMPTY_MEANS = {"task": "general", "data": "other"}


_NOT_IN_KEY = re.compile(r"\band\b|[^a-z0-9]")


def spelling_key(text: str) -> str:
    """Case, spacing, `&`/`and` and punctuation folded away: `Evaluating&Metrics` -> `evaluatingmetrics`."""
    return _NOT_IN_KEY.sub("", text.lower())


def spelling_map(extra: dict | None = None) -> dict[str, dict[str, str]]:
    """axis -> {compacted spelling -> slug}; `extra` (axis -> {spelling: slug}) adds or wins."""
    table: dict[str, dict[str, str]] = {axis: {} for axis in _SPELLINGS}
    for axis, slugs in _SPELLINGS.items():
        for slug, spellings in slugs.items():
            for spelling in (slug, *spellings, EXPORT_SPELLINGS[axis][slug]):
                table[axis][spelling_key(spelling)] = slug
    for axis, spellings in (extra or {}).items():
        if axis in table and isinstance(spellings, dict):
            for spelling, slug in spellings.items():
                table[axis][spelling_key(str(spelling))] = str(slug)
    return table


def map_label(axis: str, value: str, table: dict[str, dict[str, str]]) -> str | None:
    """Our slug for a DL-Bench label value (None when the spelling is unknown)."""
    value = (value or "").strip()
    if not value:
        return EMPTY_MEANS.get(axis)
    return table[axis].get(spelling_key(value))


@dataclass
class Labels:
    stage: str | None
    task: str | None
    data: str | None
    swapped: bool
    unknown: list[dict]               # {"axis", "value", "key"}: key = where it was written
    data_repeats_stage: bool = False  # the data field held the stage again (read as empty)


def resolve_labels(record, table: dict[str, dict[str, str]]) -> Labels:
    """Map the raw labels to slugs, undoing the stage/data swap of class files.

    Both readings (as written, and stage/data swapped) are scored by how many axes they
    resolve; a class file takes the swapped reading unless the plain one resolves more,
    a function file the plain reading unless the swapped one resolves more.
    """
    raw = {axis: record.fields.get(axis, "") for axis in ("stage", "task", "data")}
    plain = {axis: map_label(axis, raw[axis], table) for axis in raw}
    swapped_raw = dict(raw, stage=raw["data"], data=raw["stage"])
    swapped = {axis: map_label(axis, swapped_raw[axis], table) for axis in raw}

    def score(mapped: dict) -> int:
        return sum(mapped[axis] is not None for axis in ("stage", "data"))

    if record.is_class:
        use_swap = score(swapped) >= score(plain)
    else:
        use_swap = score(swapped) > score(plain)
    chosen, chosen_raw = (swapped, swapped_raw) if use_swap else (plain, raw)
    # The stage written in both fields (classes-*: "stage: Training / data: Training"):
    # no data type was given, and an empty data field means Others.
    repeated = chosen["data"] is None and chosen["stage"] is not None and \
        map_label("stage", chosen_raw["data"], table) == chosen["stage"]
    if repeated:
        chosen = dict(chosen, data=EMPTY_MEANS["data"])
    written_under = {"stage": "data", "data": "stage"} if use_swap else {}
    unknown = [{"axis": axis, "value": chosen_raw[axis], "key": written_under.get(axis, axis)}
               for axis in ("stage", "task", "data") if chosen[axis] is None]
    return Labels(chosen["stage"], chosen["task"], chosen["data"], use_swap, unknown, repeated)
