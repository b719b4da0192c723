"""The rules: one module per catalog entry, named after it (NJ201 subscript-assignment is
np2jax/rules/subscript_assignment.py, class SubscriptAssignment), beside the catalog of
their docs (rules/NJ201_subscript-assignment.toml, shipped as np2jax.rules.catalog) and
their executed fixtures (fixtures/subscript-assignment/). A module whose name starts with
an underscore holds what several rules of one family share. np2jax.rules.base has the Rule
base class and the discovery; see CONTRIBUTING.md, "Adding a rule".

Importing this package loads nothing (the catalog is found through it without libcst).
"""
