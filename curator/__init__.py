"""DL-Bench Curator: build, run and publish a deep-learning code-generation benchmark."""

__version__ = "0.1.0"
