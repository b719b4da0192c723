"""Hand-written JAX reference for nbody.py: leapfrog steps in lax.fori_loop, energy recorded
by lax.scan over intervals of 20 steps."""

import jax
import jax.numpy as jnp
from jax import lax

N_BODIES = 256
STEPS = 100
DT = 1e-3
SOFTENING = 0.1
RECORD_EVERY = 20


def initial_state(n):
    i = jnp.arange(n)
    radius = 1.0 + 0.5 * jnp.sin(i * 0.37)
    angle = i * 2.399963
    pos = jnp.stack([radius * jnp.cos(angle), radius * jnp.sin(angle), 0.1 * jnp.sin(i * 1.7)], axis=1)
    vel = jnp.stack([-jnp.sin(angle), jnp.cos(angle), jnp.zeros(n)], axis=1) * 0.3
    return pos, vel, jnp.full(n, 1.0 / n)


def accelerations(pos, mass):
    diff = pos[None, :, :] - pos[:, None, :]
    inv3 = ((diff ** 2).sum(axis=-1) + SOFTENING ** 2) ** -1.5
    return jnp.einsum("ijk,j,ij->ik", diff, mass, inv3)


def energy(pos, vel, mass):
    kinetic = 0.5 * (mass * (vel ** 2).sum(axis=1)).sum()
    diff = pos[None, :, :] - pos[:, None, :]
    dist = jnp.sqrt((diff ** 2).sum(axis=-1) + SOFTENING ** 2)
    return kinetic - 0.5 * (mass[:, None] * mass[None, :] / dist).sum()


@jax.jit
def simulate():
    pos, vel, mass = initial_state(N_BODIES)

    def leapfrog(_, state):
        pos, vel, acc = state
        vel = vel + 0.5 * DT * acc
        pos = pos + DT * vel
        acc = accelerations(pos, mass)
        return pos, vel + 0.5 * DT * acc, acc

    def interval(state, _):
        state = lax.fori_loop(0, RECORD_EVERY, leapfrog, state)
        return state, energy(state[0], state[1], mass)

    state = (pos, vel, accelerations(pos, mass))
    (pos, vel, _), energies = lax.scan(interval, state, None, length=STEPS // RECORD_EVERY)
    energies = jnp.concatenate([energy(*initial_state(N_BODIES))[None], energies])
    return {"energy": energies, "centre_of_mass": (mass[:, None] * pos).sum(axis=0), "pos": pos}


def main():
    return simulate()
