"""Python source as text: reading modules, replacing one symbol, formatting with black.

- modules:    parse a module into functions, classes and import bindings
- patch:      replace a function or method in a module, keeping the rest byte for byte
- formatting: the one black wrapper (mined and edited solutions alike)
"""
