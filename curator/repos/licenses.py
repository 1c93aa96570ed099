"""The repository's licence as an SPDX id (or `unknown`), from its licence file."""

from __future__ import annotations

import re

LICENSE_FILES = re.compile(
    r"^(licen[cs]e|copying|unlicen[cs]e)([-._][\w.-]*)?(\.(txt|md|rst))?$", re.IGNORECASE)

# (SPDX id, every pattern that must appear), most specific first. Text is normalised to
# lower case with single spaces before matching.
RULES: list[tuple[str, tuple[str, ...]]] = [
    ("AGPL-3.0", ("gnu affero general public license", "version 3")),
    ("LGPL-3.0", ("gnu lesser general public license", "version 3")),
    ("LGPL-2.1", ("gnu lesser general public license", "version 2.1")),
    ("GPL-3.0", ("gnu general public license", "version 3")),
    ("GPL-2.0", ("gnu general public license", "version 2")),
    ("Apache-2.0", ("apache license", "version 2.0")),
    ("MPL-2.0", ("mozilla public license", "2.0")),
    ("EPL-2.0", ("eclipse public license", "2.0")),
    ("BSL-1.0", ("boost software license",)),
    ("Unlicense", ("this is free and unencumbered software released into the public domain",)),
    ("CC0-1.0", ("cc0 1.0 universal",)),
    ("CC-BY-4.0", ("creative commons attribution 4.0",)),
    ("CC-BY-NC-4.0", ("attribution-noncommercial 4.0",)),
    ("ISC", (("permission to use, copy, modify, and/or distribute this software for any "
              "purpose with or without fee is hereby granted"),)),
    ("MIT", ("permission is hereby granted, free of charge",)),
    ("BSD-3-Clause", ("redistribution and use in source and binary forms",
                      "neither the name")),
    ("BSD-3-Clause", ("redistribution and use in source and binary forms",
                      "names of its contributors may be used")),
    ("BSD-2-Clause", ("redistribution and use in source and binary forms",)),
]

_SPDX_LINE = re.compile(r"SPDX-License-Identifier:\s*([\w.+-]+(?:\s+(?:OR|AND|WITH)\s+[\w.+-]+)*)")
_META_LICENSE = re.compile(r"""^\s*license\s*=\s*(?:\{\s*text\s*=\s*)?["']([^"'\n]+)["']""",
                           re.MULTILINE | re.IGNORECASE)
_CFG_LICENSE = re.compile(r"^\s*license\s*=\s*([^\n]+)$", re.MULTILINE | re.IGNORECASE)

_KNOWN_NAMES = {
    "mit": "MIT", "mit license": "MIT", "apache 2.0": "Apache-2.0", "apache-2.0": "Apache-2.0",
    "apache license 2.0": "Apache-2.0", "apache software license": "Apache-2.0",
    "apache license, version 2.0": "Apache-2.0", "apache 2": "Apache-2.0",
    "bsd": "BSD-3-Clause", "bsd-3-clause": "BSD-3-Clause", "bsd 3-clause": "BSD-3-Clause",
    "new bsd": "BSD-3-Clause", "bsd-2-clause": "BSD-2-Clause", "gpl-3.0": "GPL-3.0",
    "gplv3": "GPL-3.0", "gpl-2.0": "GPL-2.0", "gplv2": "GPL-2.0", "lgpl-3.0": "LGPL-3.0",
    "mpl-2.0": "MPL-2.0", "isc": "ISC", "unlicense": "Unlicense",
}


def from_text(text: str) -> str | None:
    """SPDX id of one licence text, or None when it is not recognised."""
    match = _SPDX_LINE.search(text[:4000])
    if match:
        return match.group(1)
    norm = " ".join(text.lower().split())
    for spdx, patterns in RULES:
        if all(p in norm for p in patterns):
            return spdx
    return None


def from_metadata(name: str, text: str) -> str | None:
    """`license = "MIT"` in pyproject.toml / setup.cfg / setup.py."""
    pattern = _CFG_LICENSE if name == "setup.cfg" else _META_LICENSE
    match = pattern.search(text)
    if not match:
        return None
    value = match.group(1).strip().strip("'\"")
    return _KNOWN_NAMES.get(value.lower())


def detect(root_files: dict[str, bytes]) -> str:
    """SPDX id from the files at the repository root ({name: bytes}), else 'unknown'."""
    licence_names = sorted((n for n in root_files if LICENSE_FILES.match(n)),
                           key=lambda n: (len(n), n))
    for name in licence_names:
        spdx = from_text(root_files[name][:200_000].decode("utf-8", "replace"))
        if spdx:
            return spdx
    for name in ("pyproject.toml", "setup.cfg", "setup.py"):
        if name in root_files:
            spdx = from_metadata(name, root_files[name][:200_000].decode("utf-8", "replace"))
            if spdx:
                return spdx
    return "unknown"
