"""Release bundles and DL-Bench interoperability.

- gates:       the checks a problem must pass before it is released
- bundle:      build a byte-reproducible bundle (folder + .tar.gz) from the store
- verify:      re-check a bundle against its manifest and schema (optionally re-run it)
- diff:        problems added / removed / changed between two bundles
- dlbench:     the original DL-Bench release format (.txt files, CSV) and its label spellings
- importing:   DL-Bench files and our own bundles into a workspace as problems
"""

from curator.errors import CuratorError


class ReleaseError(CuratorError):
    """A bundle cannot be built, read or imported."""
