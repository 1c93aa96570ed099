"""Opening the store does not import pandas (sqlite-utils would, only for a column type
the store never writes: half of every command's start); pandas stays importable."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import curator

ROOT = Path(curator.__file__).resolve().parents[1]

CHECK = """
import sys
import curator.store
import sqlite_utils
print("pandas" in sys.modules)
try:
    import pandas
    print(pandas.Timestamp.__name__)
except ImportError:
    # not installed: "missing"; hidden for good (a None left in sys.modules): "blocked"
    print("blocked" if "pandas" in sys.modules else "missing")
"""


def test_the_store_loads_without_pandas_and_leaves_it_importable():
    """Where pandas is installed it is importable afterwards; where it is not (the test
    environment), importing it still fails as a missing module, not as one the store hid."""
    proc = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    installed = importlib.util.find_spec("pandas") is not None
    assert proc.stdout.split() == ["False", "Timestamp" if installed else "missing"]
