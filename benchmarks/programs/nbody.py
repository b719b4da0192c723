"""Gravitational N-body simulation: all-pairs accelerations by broadcasting, leapfrog
(kick-drift-kick) time steps, energy tracked along the way."""

import numpy as np

N_BODIES = 256
STEPS = 100
DT = 1e-3
SOFTENING = 0.1


def initial_state(n):
    i = np.arange(n)
    radius = 1.0 + 0.5 * np.sin(i * 0.37)
    angle = i * 2.399963
    pos = np.stack([radius * np.cos(angle), radius * np.sin(angle), 0.1 * np.sin(i * 1.7)], axis=1)
    vel = np.stack([-np.sin(angle), np.cos(angle), np.zeros(n)], axis=1) * 0.3
    mass = np.full(n, 1.0 / n)
    return pos, vel, mass


def accelerations(pos, mass):
    diff = pos[None, :, :] - pos[:, None, :]
    dist2 = (diff ** 2).sum(axis=-1) + SOFTENING ** 2
    inv3 = dist2 ** -1.5
    return (diff * (mass[None, :] * inv3)[:, :, None]).sum(axis=1)


def energy(pos, vel, mass):
    kinetic = 0.5 * (mass * (vel ** 2).sum(axis=1)).sum()
    diff = pos[None, :, :] - pos[:, None, :]
    dist = np.sqrt((diff ** 2).sum(axis=-1) + SOFTENING ** 2)
    potential = -0.5 * (mass[:, None] * mass[None, :] / dist).sum()
    return kinetic + potential


def main():
    pos, vel, mass = initial_state(N_BODIES)
    acc = accelerations(pos, mass)
    energies = [energy(pos, vel, mass)]
    for step in range(STEPS):
        vel += 0.5 * DT * acc
        pos += DT * vel
        acc = accelerations(pos, mass)
        vel += 0.5 * DT * acc
        if (step + 1) % 20 == 0:
            energies.append(energy(pos, vel, mass))
    return {"energy": np.array(energies), "centre_of_mass": (mass[:, None] * pos).sum(axis=0),
            "pos": pos}
