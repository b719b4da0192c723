"""The verifier: runs original and converted programs and compares their results.

Importable without libcst or the rewriter, so it can check a port written by hand:

    from pathlib import Path
    from np2jax.verify import VerifyOptions, verify_paths
    run = verify_paths(Path("orig.py"), Path("port.py"), VerifyOptions(devices=("cpu",)))
    run.ok, [r.verdict for r in run.results], run.as_dict()

`verify_tests` runs a project's pytest suite against both trees; `compare_trees` and
`compare_values` compare result trees in-process. Nothing here imports JAX: every program
runs in a child process.
"""

from np2jax.verify.compare import (OutputComparison, Tolerance, compare_trees,
                                   compare_values)
from np2jax.verify.core import (Pair, VerifyOptions, VerifyResult, VerifyRun,
                                VerifyUsageError, pairs_for, parse_devices,
                                parse_stochastic, verify_pairs, verify_paths)
from np2jax.verify.testsuite import TestsResult, verify_tests

__all__ = ["OutputComparison", "Pair", "TestsResult", "Tolerance", "VerifyOptions",
           "VerifyResult", "VerifyRun", "VerifyUsageError", "compare_trees", "compare_values",
           "pairs_for", "parse_devices", "parse_stochastic", "verify_pairs", "verify_paths",
           "verify_tests"]
