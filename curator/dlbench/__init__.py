"""DL-Bench interoperability: its release format, label spellings, import, resolving
its problems against their upstream repositories, and its Taxonomy-Data.

- fileformat: the `.txt` and CSV release formats (parse, render)
- label_map:  DL-Bench label spellings -> our slugs
- importer:   release files -> draft problems
- upstream:   finding a problem's file, symbol, reference and tests at a commit
- resolve:    `curator dlbench resolve`: pin, fill in, register
- taxonomy_data: Taxonomy-Data (Generated + Result) -> samples judged elsewhere
"""
