"""Explicit 2-D heat equation: a five-point stencil updated in place over a time loop, with
fixed hot and cold edges, recording the total heat every few steps."""

import numpy as np

N = 256
STEPS = 1000
ALPHA = 0.2
RECORD_EVERY = 50


def main():
    u = np.zeros((N, N))
    u[0, :] = 100.0
    u[:, 0] = 50.0
    u[N // 3:N // 2, N // 3:N // 2] = 80.0
    history = []
    for step in range(STEPS):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
        u[1:-1, 1:-1] += ALPHA * lap
        if step % RECORD_EVERY == 0:
            history.append(u.sum())
    return {"u_centre_row": u[N // 2], "total_heat": np.array(history), "u_max": u[1:-1, 1:-1].max()}
