"""Panels: problem labels and mined candidates decided by several people, as DL-Bench did.

rounds      label rounds: assignment, blind votes, majority per dimension, adjudication
candidates  a panel voting candidates relevant or not under curator.toml's accept rule
balance     balanced assignment of items to people (both panels use it)
rule        the accept rule ("2 of 3") and the [candidates] table of curator.toml

Agreement (Krippendorff's alpha, Cohen's kappa) comes from curator.review.agreement, the
same code failure review uses.
"""
