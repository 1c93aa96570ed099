"""Validity of a problem's tests: do they catch wrong answers? (`curator validate`)

source.py    the entry point's definition in a solution; exact-span edits
stub.py      the stub: the entry point's body replaced by `raise NotImplementedError`
mutants.py   AST mutants of the reference (arithmetic, comparison, ..., reductions)
validate.py  stability, discrimination and mutation score through the engine; stored
repair.py    tests the mining index links to the symbol, tried and proposed as node ids
"""
