"""The np2jax rule catalog: data only (TOML rule docs and the generated API table).

Installed as the `np2jax.rules.catalog` package so the catalog ships inside the wheel,
beside the rules' code (np2jax/rules/).
"""
