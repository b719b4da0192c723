from np2jax.cli import main

main()
