"""Hand-written JAX reference for heat_stencil.py: the time loop as lax.scan over recording
intervals, each a lax.fori_loop of functional stencil updates."""

import jax
import jax.numpy as jnp
from jax import lax

N = 256
STEPS = 1000
ALPHA = 0.2
RECORD_EVERY = 50


def step(u):
    lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * u[1:-1, 1:-1]
    return u.at[1:-1, 1:-1].add(ALPHA * lap)


def interval(u, steps):
    """One recorded step (the total heat after it), then steps - 1 more."""
    u = step(u)
    total = u.sum()
    return lax.fori_loop(0, steps - 1, lambda _, v: step(v), u), total


@jax.jit
def simulate():
    u = jnp.zeros((N, N))
    u = u.at[0, :].set(100.0).at[:, 0].set(50.0)
    u = u.at[N // 3:N // 2, N // 3:N // 2].set(80.0)
    u, history = lax.scan(lambda v, _: interval(v, RECORD_EVERY), u, None,
                          length=STEPS // RECORD_EVERY)
    if STEPS % RECORD_EVERY:
        u, last = interval(u, STEPS % RECORD_EVERY)
        history = jnp.append(history, last)
    return {"u_centre_row": u[N // 2], "total_heat": history, "u_max": u[1:-1, 1:-1].max()}


def main():
    return simulate()
