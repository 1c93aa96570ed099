"""The three label vocabularies (stage, task, data): slugs, display names, definitions.

These are the defaults seeded into the database; the display names and definitions there
are editable, the slugs are the stable keys used in problem files and releases.
"""

from dataclasses import dataclass

AXES = ("stage", "task", "data")


@dataclass(frozen=True)
class Label:
    axis: str
    slug: str
    name: str
    definition: str


DEFAULT_LABELS: tuple[Label, ...] = (
    Label("stage", "prepost", "Pre/Post Processing",
          "Turns raw inputs into tensors a model can take, or model outputs into results a "
          "person or the next step can use: normalising, cropping, tokenising, padding, "
          "encoding masks, converting box formats."),
    Label("stage", "model", "Model Construction",
          "Defines what the network computes: layers, modules, forward passes, embeddings, "
          "positional encodings, and loss functions (losses belong here, not to training)."),
    Label("stage", "training", "Training",
          "Changes parameters or controls how they change: optimisation steps, epochs, "
          "gradient accumulation and clipping, schedules, early stopping, checkpoints."),
    Label("stage", "inference", "Inference",
          "Uses a trained model to produce predictions: decoding, top-k, tiling and "
          "stitching, non-maximum suppression, test-time batching."),
    Label("stage", "evaluation", "Evaluation & Metrics",
          "Measures how good predictions are against ground truth: accuracy, F1, IoU, "
          "average precision, ranking metrics, R²."),
    Label("task", "classification", "Classification",
          "Predicts one (or several) discrete classes per input."),
    Label("task", "regression", "Regression",
          "Predicts continuous values per input."),
    Label("task", "detection", "Object Detection",
          "Locates objects with bounding boxes and classifies them."),
    Label("task", "segmentation", "Image Segmentation",
          "Assigns a class to every pixel (or voxel) of an image."),
    Label("task", "timeseries", "Time Series Prediction",
          "Forecasts future values of a sequence from its past."),
    Label("task", "recommendation", "Recommendation",
          "Ranks or scores items for users from interactions."),
    Label("task", "general", "General",
          "Useful across tasks, or the task cannot be told from the function alone."),
    Label("data", "image", "Image",
          "Pixels: images, image batches, masks, boxes on images, video frames."),
    Label("data", "text", "Text",
          "Tokens, token ids, vocabularies, sequences of words or characters."),
    Label("data", "tabular", "Structured Array",
          "Rows of features or interaction matrices: tables, user-item data, logits and "
          "labels treated as plain arrays."),
    Label("data", "other", "Others",
          "Anything else: audio, signals, time series, graphs, point clouds, or no data."),
)


def slugs(axis: str) -> tuple[str, ...]:
    return tuple(label.slug for label in DEFAULT_LABELS if label.axis == axis)


STAGES = slugs("stage")
TASKS = slugs("task")
DATA = slugs("data")
VOCAB = {"stage": STAGES, "task": TASKS, "data": DATA}
