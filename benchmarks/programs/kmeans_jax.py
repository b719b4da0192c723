"""Hand-written JAX reference for kmeans.py: Lloyd iterations as lax.scan, centroids from a
one-hot matrix product instead of a loop over clusters with boolean masks."""

import jax
import jax.numpy as jnp
from jax import lax

N_POINTS = 20000
DIM = 8
K = 8
ITERATIONS = 30


def make_points(n, dim, k):
    i = jnp.arange(n)
    centres = 10.0 * jnp.sin(jnp.arange(k * dim).reshape(k, dim) * 1.3)
    spread = jnp.sin(jnp.outer(i, jnp.arange(1, dim + 1)) * 0.37) * 0.8
    return centres[i % k] + spread


def lloyd_step(C, X):
    d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=-1)
    labels = d.argmin(axis=1)
    onehot = jax.nn.one_hot(labels, C.shape[0], dtype=X.dtype)
    counts = onehot.sum(axis=0)
    sums = onehot.T @ X
    C = jnp.where(counts[:, None] > 0, sums / jnp.maximum(counts, 1.0)[:, None], C)
    return C, (labels, d.min(axis=1).sum())


@jax.jit
def kmeans():
    X = make_points(N_POINTS, DIM, K)
    C, (labels, inertia) = lax.scan(lambda c, _: lloyd_step(c, X), X[:K], None, length=ITERATIONS)
    return {"centroids": C, "counts": jnp.bincount(labels[-1], length=K), "inertia": inertia}


def main():
    return kmeans()
