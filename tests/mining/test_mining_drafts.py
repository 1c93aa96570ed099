"""Draft prompts: docstrings as plain text, class context, nothing about where code lives."""

from __future__ import annotations

import pytest
from mining_support import make_dl_repo, mine_first_commit, mining_workspace

from curator.mining import promote
from curator.mining.drafts import context_for, docstring_text, skeleton
from curator.store import Store
from curator.store import problems as problem_store


@pytest.mark.parametrize("doc, expected", [
    # roles: code references keep their text, ~ keeps the last part, math is bare
    ("See :func:`~kornia.enhance.equalize` and :class:`torch.Tensor`.",
     "See `equalize` and `torch.Tensor`."),
    ("Shape :math:`(B, C, H, W)`.", "Shape (B, C, H, W)."),
    ("Uses :py:meth:`Tensor.sum <torch.Tensor.sum>` here.", "Uses `Tensor.sum` here."),
    # citations, issue links and URLs are dropped, with the space before them
    ("As in CLAHE :cite:`zuiderveld1994`, see :issue:`123`.", "As in CLAHE, see."),
    ("Fixed in https://github.com/kornia/kornia/issues/1234.", "Fixed in."),
    ("Read `the paper <https://arxiv.org/abs/1>`_ [1]_.", "Read the paper."),
    ("Inline ``torch.histc`` literal.", "Inline `torch.histc` literal."),
    # directives: images and version notes dropped, notes kept as text
    ("Equalise.\n\n.. image:: _static/img/clahe.png\n   :width: 200\n\nDone.",
     "Equalise.\n\nDone."),
    ("Equalise.\n\n.. note::\n   Uses OpenCV's\n   approach.\n\nDone.",
     "Equalise.\n\nNote: Uses OpenCV's approach.\n\nDone."),
    ("A.\n\n.. versionadded:: 0.6\n\n.. [1] Zuiderveld, CLAHE.\n\nB.", "A.\n\nB."),
    ("A.\n\n.. math::\n\n   y = x^2\n\nB.", "A.\n\n    y = x^2\n\nB."),
    # doctest inputs stay, their output goes
    ("Example:\n    >>> out = f(torch.ones(2))\n    >>> out.shape\n    torch.Size([2])\n",
     "Example:\n>>> out = f(torch.ones(2))\n>>> out.shape"),
    ("Example::\n\n    >>> f(1)\n    2\n\nMore.", "Example:\n\n    >>> f(1)\n\nMore."),
    (None, ""),
])
def test_docstrings_become_plain_text(doc, expected):
    assert docstring_text(doc) == expected


MODULE = '''import torch
from torch import nn


def _reduce(x, dim):
    return x.mean(dim)


def _unused(x):
    return x


class Variance(nn.Module, metaclass=type):
    """Variance along a dimension."""

    def __init__(self, dim: int = -1, unbiased: bool = True) -> None:
        super().__init__()
        self.dim = dim
        self.unbiased = unbiased
        self.eps: float = 1e-6

    def _correction(self, n):
        return n - 1 if self.unbiased else n

    def _never_called(self):
        return 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[self.dim]
        mean = _reduce(x, self.dim)
        return ((x - mean) ** 2).sum(self.dim) / self._correction(n)
'''


def test_method_context_has_the_class_init_attributes_and_what_it_calls():
    context = context_for(MODULE, "Variance.forward")
    assert context.class_header == "class Variance(nn.Module, metaclass=type):"
    assert context.class_doc == "Variance along a dimension."
    assert context.init_signature == ("def __init__(self, dim: int=-1, unbiased: bool=True)"
                                      " -> None:")
    assert context.attributes == ["self.dim = dim", "self.unbiased = unbiased",
                                  "self.eps = 1e-06"]
    assert context.methods == ["def _correction(self, n):"]
    assert context.helpers == ["def _reduce(x, dim):"]
    code = skeleton("def forward(self, x: torch.Tensor) -> torch.Tensor:", "method", context)
    assert code.splitlines() == [
        "class Variance(nn.Module, metaclass=type):",
        "    def __init__(self, dim: int=-1, unbiased: bool=True) -> None:",
        "        self.dim = dim",
        "        self.unbiased = unbiased",
        "        self.eps = 1e-06",
        "",
        "    def _correction(self, n):",
        "        ...",
        "",
        "    def forward(self, x: torch.Tensor) -> torch.Tensor:",
        "        # to implement",
    ]
    assert context_for(MODULE, "_reduce").helpers == []
    assert context_for("def broken(:\n", "f").class_header == ""


def test_accepted_prompts_carry_context_and_never_the_location(tmp_path):
    repo = make_dl_repo(tmp_path / "upstream" / "dlrepo")
    ws = mining_workspace(tmp_path / "ws")
    with Store(ws.db_path, "miner") as store:
        ids = mine_first_commit(store, ws, repo)
        method = promote.accept(store, ws, ids["FocalLoss.forward"])["problem_id"]
        function = promote.accept(store, ws, ids["box_area"])["problem_id"]
        prompts = {pid: problem_store.get(store, pid).prompt for pid in (method, function)}
    focal = prompts[method]
    assert "class FocalLoss(nn.Module):" in focal
    assert "    def __init__(self, gamma: float=2.0):" in focal
    assert "        self.gamma = gamma" in focal
    assert "Mean focal loss of logits against 0/1 targets." in focal
    assert "About the class `FocalLoss`:\n\nBinary focal loss." in focal
    for prompt in prompts.values():
        assert "pkg/boxes.py" not in prompt and "Upstream" not in prompt
        assert repo["first"][:12] not in prompt and str(tmp_path) not in prompt
        assert "dlrepo" not in prompt


def rules(rows, axis, slug):
    return {r["rule"] for r in rows if (r["axis"], r["slug"]) == (axis, slug)}


def test_label_suggestions_use_paths_docstrings_bases_and_training_calls():
    from curator.mining.suggest import best, suggest

    augment = suggest("apply_transform", "RandomSaturation", ["self", "input", "params"],
                      ["torch.clamp"], ["kornia.augmentation.IntensityAugmentationBase2D"],
                      "apply_transform",
                      docstring="Saturate images of shape :math:`(B, C, H, W)`.",
                      path="kornia/augmentation/_2d/intensity/saturation.py")
    assert {"path:augmentation", "base:augmentation"} <= rules(augment, "stage", "prepost")
    assert "docstring:(b, c, h, w)" in rules(augment, "data", "image")
    assert best(augment)["stage"] == "prepost" and best(augment)["data"] == "image"
    for row in augment:   # every suggestion says which rule fired and on what
        assert row["rule"] and row["evidence"]

    loop = suggest("fit_epoch", None, ["model", "loader", "optimizer"], ["torch.optim.SGD"],
                   [], method_calls={"backward", "zero_grad", "step", "item"},
                   path="src/engine/loop.py")
    assert {"calls:backward", "calls:step", "path:engine"} <= rules(loop, "stage", "training")
    assert best(loop)["stage"] == "training"

    metric = suggest("update", "MeanIoU", ["self", "preds", "target"], [],
                     ["torchmetrics.Metric"], "update", path="pkg/metrics/iou.py",
                     docstring="Mean intersection over union of segmentation masks.")
    assert best(metric)["stage"] == "evaluation" and best(metric)["task"] == "segmentation"

    plain = suggest("helper", None, ["x"], [], [])
    assert rules(plain, "task", "general") == {"default"}
