"""python -m np2jax.apiproof: regenerate rules/api/proven.json (np2jax.apiproof.table)."""

from np2jax.apiproof.table import main

main()
