"""Hand-written JAX reference for monte_carlo.py: the path loop as lax.scan over split
jax.random keys, running sum and maximum in the carry."""

import jax
import jax.numpy as jnp
from jax import lax

N_PATHS = 200_000
N_STEPS = 100
S0 = 100.0
STRIKE = 100.0
BARRIER = 130.0
RATE = 0.03
VOLATILITY = 0.25
MATURITY = 1.0

STOCHASTIC = {"asian_price": 0.15, "barrier_price": 0.15, "knocked_out": 0.01,
              "terminal_mean": 0.3}


@jax.jit
def simulate(key):
    dt = MATURITY / N_STEPS
    drift = (RATE - 0.5 * VOLATILITY ** 2) * dt
    diffusion = VOLATILITY * jnp.sqrt(dt)

    def step(carry, step_key):
        S, running_sum, running_max = carry
        S = S * jnp.exp(drift + diffusion * jax.random.normal(step_key, (N_PATHS,)))
        return (S, running_sum + S, jnp.maximum(running_max, S)), None

    start = jnp.full(N_PATHS, S0)
    (S, running_sum, running_max), _ = lax.scan(
        step, (start, jnp.zeros(N_PATHS), start), jax.random.split(key, N_STEPS))
    discount = jnp.exp(-RATE * MATURITY)
    asian = discount * jnp.maximum(running_sum / N_STEPS - STRIKE, 0.0).mean()
    alive = running_max < BARRIER
    barrier = discount * jnp.where(alive, jnp.maximum(S - STRIKE, 0.0), 0.0).mean()
    return {"asian_price": asian, "barrier_price": barrier, "knocked_out": 1.0 - alive.mean(),
            "terminal_mean": S.mean()}


def main():
    return simulate(jax.random.key(2024))
