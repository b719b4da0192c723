"""The verifier: runs original and converted programs and compares their results.

Importable without libcst or the rewriter, so it can check a port written by hand.
"""
