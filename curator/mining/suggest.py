"""Label suggestions (stage / task / data) from simple rules a person can check.

Each suggestion names the rule that fired and the evidence it saw (a word in the function
name, an API it calls, its base class). Suggestions are never written as labels; a person
picks the labels.
"""

from __future__ import annotations

import re

from curator.mining.relevance import words

# (axis, slug) -> words in names that point at it.
NAME_RULES: dict[tuple[str, str], set[str]] = {
    ("stage", "model"): {"loss", "criterion", "forward", "layer", "block", "attention",
                         "attn", "embedding", "embed", "encoder", "decoder", "conv", "head",
                         "backbone", "activation", "network", "net", "mlp", "init",
                         "initialize", "weights"},
    ("stage", "training"): {"train", "training", "step", "optimizer", "optimize", "backward",
                            "epoch", "scheduler", "lr", "clip", "accumulate", "fit",
                            "checkpoint", "early", "stopping", "grad", "gradient", "warmup"},
    ("stage", "inference"): {"predict", "prediction", "infer", "inference", "decode",
                             "generate", "nms", "suppression", "beam", "sample", "sampling",
                             "greedy", "stitch", "tile"},
    ("stage", "evaluation"): {"metric", "metrics", "accuracy", "acc", "precision", "recall",
                              "f1", "iou", "auc", "roc", "evaluate", "eval", "confusion",
                              "psnr", "ssim", "ndcg", "bleu", "rouge", "r2", "map", "score"},
    ("stage", "prepost"): {"normalize", "normalise", "resize", "crop", "pad", "padding",
                           "tokenize", "transform", "augment", "convert", "encode",
                           "preprocess", "postprocess", "collate", "rescale", "flip",
                           "rotate", "one", "hot", "onehot", "xyxy", "xywh", "cxcywh",
                           "denormalize", "standardize", "scale", "mask", "norm"},
    ("task", "detection"): {"bbox", "bboxes", "box", "boxes", "nms", "anchor", "anchors",
                            "detect", "detection", "detector", "yolo", "roi", "xyxy", "xywh",
                            "cxcywh"},
    ("task", "segmentation"): {"segment", "segmentation", "seg", "mask", "masks", "dice",
                               "semantic", "panoptic", "superpixel"},
    ("task", "classification"): {"classify", "classification", "classifier", "logits",
                                 "softmax", "label", "labels", "topk", "onehot", "accuracy",
                                 "entropy"},
    ("task", "regression"): {"regress", "regression", "mse", "mae", "rmse", "r2", "huber"},
    ("task", "timeseries"): {"series", "forecast", "forecasting", "lag", "lags", "temporal",
                             "seasonal", "trend", "horizon"},
    ("task", "recommendation"): {"recommend", "recommendation", "recommender", "user",
                                 "users", "item", "items", "rating", "ratings", "ndcg", "ctr"},
    ("data", "image"): {"image", "images", "img", "imgs", "pixel", "pixels", "rgb", "bgr",
                        "gray", "grayscale", "hsv", "photo", "chw", "hwc", "conv2d", "video",
                        "frame", "frames", "bbox", "boxes", "mask", "masks", "heatmap"},
    ("data", "text"): {"text", "token", "tokens", "tokenize", "tokenizer", "vocab", "word",
                       "words", "sentence", "sentences", "char", "chars", "bpe", "bert",
                       "nlp", "corpus", "lang", "language"},
    ("data", "tabular"): {"table", "tabular", "dataframe", "df", "feature", "features",
                          "column", "columns", "csv", "row", "rows"},
    ("data", "other"): {"audio", "signal", "wave", "waveform", "spectrogram", "graph", "node",
                        "nodes", "edge", "edges", "point", "points", "cloud", "mesh", "voxel",
                        "series"},
}

# (axis, slug) -> prefixes of absolute API names that point at it.
API_RULES: dict[tuple[str, str], tuple[str, ...]] = {
    ("stage", "training"): ("torch.optim", "torch.nn.utils.clip_grad", "tensorflow.GradientTape",
                            "torch.cuda.amp.GradScaler", "torch.amp.GradScaler"),
    ("stage", "inference"): ("torch.no_grad", "torch.inference_mode", "torchvision.ops.nms",
                             "torchvision.ops.batched_nms"),
    ("stage", "evaluation"): ("sklearn.metrics", "torchmetrics", "scipy.stats"),
    ("stage", "prepost"): ("torchvision.transforms", "PIL", "cv2", "torch.nn.functional.pad",
                           "torch.nn.functional.one_hot", "torch.nn.functional.interpolate",
                           "kornia.augmentation", "kornia.color", "torch.utils.data"),
    ("stage", "model"): ("torch.nn.Linear", "torch.nn.Conv", "torch.nn.Sequential",
                         "torch.nn.init", "torch.nn.Parameter", "tensorflow.keras.layers",
                         "keras.layers", "torch.nn.functional.cross_entropy",
                         "torch.nn.functional.binary_cross_entropy", "torch.nn.functional.mse_loss",
                         "torch.nn.functional.l1_loss", "torch.nn.functional.nll_loss"),
    ("task", "detection"): ("torchvision.ops.box", "torchvision.ops.nms", "torchvision.ops.roi",
                            "torchvision.ops.batched_nms", "torchvision.models.detection"),
    ("task", "segmentation"): ("torchvision.models.segmentation",
                               "segmentation_models_pytorch"),
    ("task", "classification"): ("torch.nn.functional.cross_entropy",
                                 "torch.nn.functional.softmax", "torch.nn.functional.nll_loss",
                                 "torch.nn.CrossEntropyLoss", "sklearn.metrics.accuracy_score",
                                 "torch.topk", "torch.nn.functional.one_hot"),
    ("task", "regression"): ("torch.nn.functional.mse_loss", "torch.nn.functional.l1_loss",
                             "torch.nn.MSELoss", "sklearn.metrics.r2_score",
                             "sklearn.metrics.mean_squared_error"),
    ("data", "image"): ("torchvision", "cv2", "PIL", "kornia.color", "kornia.filters",
                        "kornia.augmentation", "kornia.enhance", "kornia.geometry.transform",
                        "kornia.utils.image", "skimage",
                        "torch.nn.functional.conv2d", "torch.nn.Conv2d",
                        "torch.nn.functional.grid_sample", "torch.nn.functional.max_pool2d",
                        "torch.nn.functional.avg_pool2d"),
    ("data", "text"): ("transformers", "torchtext", "nltk", "spacy", "tokenizers",
                       "torch.nn.utils.rnn.pad_sequence", "torch.nn.Embedding"),
    ("data", "tabular"): ("pandas", "sklearn.preprocessing"),
    ("data", "other"): ("torchaudio", "torch_geometric", "pytorch3d", "librosa", "scipy.signal"),
}

# (axis, slug) -> folder names (any part of the module's path) that point at it.
PATH_RULES: dict[tuple[str, str], set[str]] = {
    ("stage", "prepost"): {"augmentation", "augmentations", "augment", "transforms",
                           "transform", "color", "enhance", "preprocessing", "preprocess",
                           "data", "datasets", "dataset", "dataloader", "io", "tokenizers",
                           "postprocessing"},
    ("stage", "model"): {"losses", "loss", "nn", "layers", "models", "modules", "networks",
                         "backbones", "heads", "blocks", "criterion"},
    ("stage", "evaluation"): {"metrics", "metric", "evaluation", "eval", "benchmarks"},
    ("stage", "training"): {"train", "training", "trainer", "engine", "optim", "optimizers",
                            "schedulers", "callbacks"},
    ("stage", "inference"): {"inference", "predict", "prediction", "serving", "export"},
    ("task", "detection"): {"detection", "detectors", "bbox", "boxes", "anchors"},
    ("task", "segmentation"): {"segmentation", "seg", "masks"},
    ("task", "classification"): {"classification", "classifiers"},
    ("task", "timeseries"): {"timeseries", "forecasting", "time_series"},
    ("data", "image"): {"image", "images", "vision", "geometry", "color", "filters",
                        "augmentation", "enhance", "feature", "imgproc"},
    ("data", "text"): {"text", "nlp", "tokenizers", "language"},
    ("data", "tabular"): {"tabular", "dataframe"},
    ("data", "other"): {"audio", "graph", "graphs", "pointcloud", "point_cloud", "mesh",
                        "spatial", "signal"},
}

# (axis, slug) -> phrases in a docstring that point at it (lower-cased, whole words).
DOC_RULES: dict[tuple[str, str], tuple[str, ...]] = {
    ("data", "image"): ("(b, c, h, w)", "(*, c, h, w)", "(c, h, w)", "(b, h, w)",
                        "(*, h, w)", "image", "images", "pixel", "rgb"),
    ("data", "text"): ("token", "tokens", "sentence", "vocabulary", "text"),
    ("data", "tabular"): ("dataframe", "tabular", "(n, d)", "(n, k)", "(n_samples",
                          "np.ndarray", "numpy array", "array of shape (n"),
    ("data", "other"): ("point cloud", "(b, n, 3)", "graph", "audio", "waveform", "mesh"),
    ("stage", "model"): ("loss", "criterion", "layer", "module that"),
    ("stage", "evaluation"): ("metric", "accuracy", "score between"),
    ("stage", "prepost"): ("augmentation", "normalize", "normalise", "convert"),
    ("stage", "training"): ("optimizer", "learning rate", "gradient step"),
    ("task", "detection"): ("bounding box", "boxes"),
    ("task", "segmentation"): ("segmentation", "mask"),
    ("task", "classification"): ("class probabilities", "logits", "labels"),
}

# Methods called on any object that mark a training loop.
TRAINING_CALLS = {"backward": "loss.backward()", "zero_grad": "optimizer.zero_grad()",
                  "step": "optimizer.step()"}

DEFAULTS = {"stage": ("prepost", "no stage-specific names, paths, docstring words or APIs "
                               "(Pre/Post Processing is the most common stage)"),
            "task": ("general", "no task-specific names, paths, docstring words or APIs"),
            "data": ("other", "no data-type-specific names, paths, docstring words or APIs")}


def suggest(name: str, class_name: str | None, args: list[str], apis: list[str],
            bases: list[str], method: str | None = None, docstring: str | None = None,
            path: str | None = None, method_calls: set[str] | None = None) -> list[dict]:
    """Suggestions [{axis, slug, rule, evidence, weight}], strongest first per axis.

    Rules look at names (function, class, arguments), the module's path, the docstring,
    the APIs called, base classes and training-loop calls; each suggestion says which
    rule fired (`rule`) on what (`evidence`).
    """
    found: dict[tuple[str, str, str], dict] = {}

    def add(axis: str, slug: str, rule: str, evidence: str, weight: float) -> None:
        key = (axis, slug, rule)
        if key not in found or found[key]["weight"] < weight:
            found[key] = {"axis": axis, "slug": slug, "rule": rule, "evidence": evidence,
                          "weight": weight}

    sources = [("function-name", name, 0.5)]
    if class_name:
        sources.append(("class-name", class_name, 0.35))
    sources += [("argument-name", arg, 0.2) for arg in args if arg not in ("self", "cls")]
    for rule, text, weight in sources:
        tokens = set(words(text))
        for (axis, slug), keywords in NAME_RULES.items():
            hits = sorted(tokens & keywords)
            if hits:
                add(axis, slug, f"{rule}:{hits[0]}", f"{rule.replace('-', ' ')} {text!r} "
                    f"contains {hits[0]!r}", weight)
    for api in apis:
        for (axis, slug), prefixes in API_RULES.items():
            for prefix in prefixes:
                if api == prefix or api.startswith(prefix):
                    add(axis, slug, f"api:{prefix}", f"calls {api}", 0.4)
                    break
    if path:
        folders = [p.lower() for p in path.split("/")[:-1]]
        stem = path.rsplit("/", 1)[-1].removesuffix(".py").lower()
        for (axis, slug), names in PATH_RULES.items():
            hits = [f for f in [*folders, stem] if f in names]
            if hits:
                add(axis, slug, f"path:{hits[-1]}", f"module path {path} ({hits[-1]})", 0.3)
    if docstring:
        text = " ".join(docstring.lower().split())
        for (axis, slug), phrases in DOC_RULES.items():
            for phrase in phrases:
                pattern = re.escape(phrase) if not phrase[0].isalnum() else \
                    rf"\b{re.escape(phrase)}\b"
                if re.search(pattern, text):
                    add(axis, slug, f"docstring:{phrase}", f"docstring mentions {phrase!r}",
                        0.25)
                    break
    for call, shown in TRAINING_CALLS.items():
        if call in (method_calls or ()) and ("backward" in (method_calls or ())
                                             or call == "backward"):
            add("stage", "training", f"calls:{call}", f"calls {shown} (a training step)", 0.6)
    if any(b.endswith(("Dataset", "IterableDataset", "DataLoader")) for b in bases):
        add("stage", "prepost", "base:dataset", f"{class_name} is a dataset or data loader",
            0.6)
    if any("augmentation" in b.lower() for b in bases):
        add("stage", "prepost", "base:augmentation", f"{class_name} is an augmentation", 0.6)
        add("data", "image", "base:augmentation", f"{class_name} augments images", 0.3)
    is_module = any(b.endswith(("nn.Module", "keras.layers.Layer", "keras.Model"))
                    for b in bases)
    if is_module and method in ("forward", "__call__", "call"):
        add("stage", "model", "base:module-forward",
            f"{class_name}.{method} of a network module", 0.7)
    if (class_name or "").lower().endswith("metric") or any(
            b.endswith(("Metric", "metrics.Metric")) for b in bases):
        add("stage", "evaluation", "class-name:metric", f"{class_name} is a metric", 0.7)
    if class_name and class_name.lower().endswith("loss"):
        add("stage", "model", "class-name:loss", f"{class_name} is a loss (losses are Model "
            "Construction)", 0.7)
    rows = sorted(found.values(), key=lambda r: (r["axis"], -r["weight"], r["slug"], r["rule"]))
    axes = {r["axis"] for r in rows}
    for axis, (slug, why) in DEFAULTS.items():
        if axis not in axes:
            rows.append({"axis": axis, "slug": slug, "rule": "default", "evidence": why,
                         "weight": 0.1})
    return rows


def best(suggestions: list[dict]) -> dict[str, str]:
    """The strongest slug per axis (weights of rules for the same slug add up)."""
    totals: dict[tuple[str, str], float] = {}
    for row in suggestions:
        key = (row["axis"], row["slug"])
        totals[key] = totals.get(key, 0.0) + row["weight"]
    choice: dict[str, tuple[float, str]] = {}
    for (axis, slug), total in totals.items():
        if axis not in choice or total > choice[axis][0]:
            choice[axis] = (total, slug)
    return {axis: slug for axis, (_, slug) in sorted(choice.items())}
