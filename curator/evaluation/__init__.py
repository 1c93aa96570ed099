"""Measuring models on the benchmark: sample import, code extraction, evaluation, pass@k."""
