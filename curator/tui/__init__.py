"""The Textual app: the only part of curator that imports textual."""
