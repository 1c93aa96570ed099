"""How deep-learning-ish a function is, from the frameworks and APIs it uses, with evidence.

The score is 1 - prod(1 - w) over evidence weights, so it stays in [0, 1] and every item
a person sees in the evidence list moved it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from curator.pysource.modules import FunctionInfo, ModuleInfo

# Top-level package -> (framework, weight of the first API it contributes).
FRAMEWORKS: dict[str, tuple[str, float]] = {
    "torch": ("pytorch", 0.6), "torchvision": ("pytorch", 0.6),
    "torchaudio": ("pytorch", 0.6), "torchtext": ("pytorch", 0.6),
    "torchmetrics": ("pytorch", 0.6), "pytorch_lightning": ("pytorch", 0.6),
    "lightning": ("pytorch", 0.5), "timm": ("pytorch", 0.6), "kornia": ("pytorch", 0.6),
    "pytorch3d": ("pytorch", 0.6), "monai": ("pytorch", 0.6), "detectron2": ("pytorch", 0.6),
    "mmcv": ("pytorch", 0.5), "mmdet": ("pytorch", 0.5), "torch_geometric": ("pytorch", 0.6),
    "segmentation_models_pytorch": ("pytorch", 0.6), "einops": ("pytorch", 0.4),
    "tensorflow": ("tensorflow", 0.6), "keras": ("tensorflow", 0.6),
    "tf_keras": ("tensorflow", 0.6), "jax": ("jax", 0.6), "flax": ("jax", 0.6),
    "haiku": ("jax", 0.6), "optax": ("jax", 0.6), "transformers": ("pytorch", 0.5),
    "numpy": ("numpy", 0.35), "cupy": ("numpy", 0.35), "scipy": ("numpy", 0.2),
    "sklearn": ("sklearn", 0.4), "pandas": ("pandas", 0.15), "cv2": ("numpy", 0.3),
    "PIL": ("numpy", 0.25), "skimage": ("numpy", 0.25), "cleanlab": ("numpy", 0.3),
}

MODULE_BASES = re.compile(
    r"(^|\.)(nn\.Module|Module|Layer|Model|LightningModule|_Loss|_WeightedLoss|Optimizer|"
    r"Dataset|IterableDataset|Metric|Callback)$")

TENSOR_METHODS = {
    "view", "permute", "unsqueeze", "squeeze", "contiguous", "detach", "cuda", "backward",
    "numel", "softmax", "log_softmax", "argmax", "masked_fill", "masked_fill_", "matmul",
    "bmm", "einsum", "clamp", "clamp_", "expand", "expand_as", "repeat_interleave", "gather",
    "scatter", "scatter_", "index_select", "type_as", "new_zeros", "new_ones", "new_tensor",
    "zero_grad", "requires_grad_", "item", "reshape", "transpose", "flatten",
}

NAME_WORDS = {
    "loss", "logits", "logit", "tensor", "tensors", "batch", "conv", "attention", "attn",
    "embedding", "embeddings", "iou", "nms", "bbox", "bboxes", "boxes", "mask", "masks",
    "layer", "grad", "gradient", "optimizer", "epoch", "weights", "dropout", "activation",
    "kernel", "pixel", "pixels", "image", "images", "img", "token", "tokens", "model",
    "softmax", "sigmoid", "relu", "encoder", "decoder", "anchor", "anchors", "feature",
    "features", "label", "labels", "pred", "preds", "prediction", "predictions", "target",
    "targets", "probs", "heatmap", "keypoints", "channels", "augment", "normalize",
}

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def words(name: str) -> list[str]:
    """`focalLoss_2d` -> ['focal', 'loss', '2', 'd']: snake and camel case, lower-cased."""
    return [w.lower() for w in _WORD.findall(name)]


@dataclass
class Relevance:
    score: float
    evidence: list[dict]
    framework: str
    apis: list[str]          # absolute dotted names of framework APIs used


def resolve_chain(chain: str, module: ModuleInfo) -> str | None:
    """`F.relu` -> `torch.nn.functional.relu` through the module's imports."""
    root, _, rest = chain.partition(".")
    binding = module.bindings.get(root)
    if binding is None:
        return None
    return f"{binding.target}.{rest}" if rest else binding.target


def used_apis(function: FunctionInfo, module: ModuleInfo) -> list[str]:
    """Imported names the function uses, as absolute dotted names (longest chains)."""
    found = set()
    refs = function.refs
    for chain in refs.chains:
        resolved = resolve_chain(chain, module)
        if resolved:
            found.add(resolved)
    covered = {c.split(".", 1)[0] for c in refs.chains}
    for name in refs.names - covered:
        resolved = resolve_chain(name, module)
        if resolved:
            found.add(resolved)
    return sorted(found)


def score(function: FunctionInfo, module: ModuleInfo) -> Relevance:
    evidence: list[dict] = []
    apis = used_apis(function, module)
    per_root: dict[str, list[str]] = {}
    for api in apis:
        root = api.split(".", 1)[0]
        if root in FRAMEWORKS:
            per_root.setdefault(root, []).append(api)
    framework_weights: dict[str, float] = {}
    for root, names in sorted(per_root.items()):
        framework, weight = FRAMEWORKS[root]
        framework_weights[framework] = max(framework_weights.get(framework, 0), weight)
        for index, api in enumerate(names[:6]):
            evidence.append({"kind": "api", "detail": api,
                             "weight": round(weight if index == 0 else weight * 0.25, 3)})
    if function.class_name:
        for base in function.class_bases:
            resolved = resolve_chain(base, module) or base
            if MODULE_BASES.search(resolved) and resolved.split(".")[0] in FRAMEWORKS:
                evidence.append({"kind": "base", "detail": f"class {function.class_name}"
                                 f"({base}) -> {resolved}", "weight": 0.6})
                framework = FRAMEWORKS[resolved.split(".")[0]][0]
                framework_weights[framework] = max(framework_weights.get(framework, 0), 0.6)
    tensor_methods = sorted(function.refs.method_calls & TENSOR_METHODS)
    for name in tensor_methods[:3]:
        evidence.append({"kind": "tensor-method", "detail": f".{name}(...)", "weight": 0.1})
    names = [function.name] + ([function.class_name] if function.class_name else [])
    hits = sorted({w for n in names for w in words(n)} & NAME_WORDS)
    for word in hits[:2]:
        evidence.append({"kind": "name", "detail": f"name has {word!r}", "weight": 0.1})
    if not per_root:
        imported = sorted({b.target.split(".")[0] for b in module.bindings.values()}
                          & set(FRAMEWORKS))
        for root in imported[:2]:
            evidence.append({"kind": "module-import",
                             "detail": f"module imports {root} (not used here)",
                             "weight": 0.1})
            framework_weights.setdefault(FRAMEWORKS[root][0], 0.01)
    remaining = 1.0
    for item in evidence:
        remaining *= 1.0 - item["weight"]
    evidence.sort(key=lambda e: (-e["weight"], e["kind"], e["detail"]))
    framework = max(framework_weights, key=framework_weights.get) if framework_weights \
        else "python"
    return Relevance(score=round(1.0 - remaining, 3), evidence=evidence, framework=framework,
                     apis=apis)
