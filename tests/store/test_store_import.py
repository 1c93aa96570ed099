"""Opening the store does not import pandas (sqlite-utils would, only for a column type
the store never writes: half of every command's start); pandas stays importable."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import curator

ROOT = Path(curator.__file__).resolve().parents[1]

CHECK = """
import sys
import curator.store
import sqlite_utils
print("pandas" in sys.modules)
import pandas
print(pandas.Timestamp.__name__)
"""


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None,
                    reason="pandas is not installed: sqlite-utils cannot import it anyway")
def test_the_store_loads_without_pandas_and_leaves_it_importable():
    proc = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["False", "Timestamp"]
