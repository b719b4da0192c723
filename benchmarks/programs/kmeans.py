"""Lloyd's k-means on deterministic clustered points: distances by broadcasting, labels by
argmin, centroids by masked means, stopped after a fixed number of iterations."""

import numpy as np

N_POINTS = 20000
DIM = 8
K = 8
ITERATIONS = 30


def make_points(n, dim, k):
    i = np.arange(n)
    centres = 10.0 * np.sin(np.arange(k * dim).reshape(k, dim) * 1.3)
    spread = np.sin(np.outer(i, np.arange(1, dim + 1)) * 0.37) * 0.8
    return centres[i % k] + spread


def kmeans(X, k, iterations):
    C = X[:k].copy()
    inertia = []
    for _ in range(iterations):
        d = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=-1)
        labels = d.argmin(axis=1)
        inertia.append(d.min(axis=1).sum())
        for j in range(k):
            members = labels == j
            if members.any():
                C[j] = X[members].mean(axis=0)
    return C, labels, np.array(inertia)


def main():
    X = make_points(N_POINTS, DIM, K)
    C, labels, inertia = kmeans(X, K, ITERATIONS)
    counts = np.bincount(labels, minlength=K)
    return {"centroids": C, "counts": counts, "inertia": inertia}
