"""Release bundles: gates, build, read, verify, diff, and importing our own bundles.

- gates:     the checks a problem must pass before it is released
- bundle:    build a byte-reproducible bundle (folder + .tar.gz) from the store
- verify:    re-check a bundle against its manifest and schema (optionally re-run it)
- diff:      problems added / removed / changed between two bundles
- importing: our own bundles back into a workspace as problems
(DL-Bench's formats, import and resolve: curator.dlbench. ReleaseError: curator.errors.)
"""
