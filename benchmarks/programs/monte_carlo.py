"""Monte Carlo pricing of an Asian call and an up-and-out barrier call: geometric Brownian
motion paths stepped in a time loop, running average and running maximum kept per path."""

import numpy as np

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


def main():
    rng = np.random.default_rng(2024)
    dt = MATURITY / N_STEPS
    drift = (RATE - 0.5 * VOLATILITY ** 2) * dt
    diffusion = VOLATILITY * np.sqrt(dt)
    S = np.full(N_PATHS, S0)
    running_sum = np.zeros(N_PATHS)
    running_max = S.copy()
    for _ in range(N_STEPS):
        z = rng.standard_normal(N_PATHS)
        S *= np.exp(drift + diffusion * z)
        running_sum += S
        np.maximum(running_max, S, out=running_max)
    discount = np.exp(-RATE * MATURITY)
    average = running_sum / N_STEPS
    asian = discount * np.maximum(average - STRIKE, 0.0).mean()
    alive = running_max < BARRIER
    barrier = discount * np.where(alive, np.maximum(S - STRIKE, 0.0), 0.0).mean()
    return {"asian_price": asian, "barrier_price": barrier, "knocked_out": 1.0 - alive.mean(),
            "terminal_mean": S.mean()}
