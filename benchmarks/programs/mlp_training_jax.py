"""Hand-written JAX reference for mlp_training.py: the epochs as lax.scan over the
parameters, the same backpropagation with jnp.where for the ReLU mask."""

import jax
import jax.numpy as jnp
from jax import lax

N_SAMPLES = 2048
N_FEATURES = 32
N_HIDDEN = 64
N_CLASSES = 10
EPOCHS = 100
LEARNING_RATE = 0.5


def make_data(n, d, classes):
    X = jnp.sin(jnp.outer(jnp.arange(n), jnp.arange(1, d + 1)) * 0.01 + jnp.arange(d))
    y = (jnp.abs(X[:, :3].sum(axis=1)) * 4).astype(int) % classes
    return X, y


def epoch(params, X, y, onehot):
    W1, b1, W2, b2 = params
    h = jnp.maximum(X @ W1 + b1, 0.0)
    p = jax.nn.softmax(h @ W2 + b2, axis=1)
    loss = -jnp.mean(jnp.log(p[jnp.arange(X.shape[0]), y] + 1e-12))
    grad_logits = (p - onehot) / X.shape[0]
    dh = jnp.where(h > 0, grad_logits @ W2.T, 0.0)
    grads = (X.T @ dh, dh.sum(axis=0), h.T @ grad_logits, grad_logits.sum(axis=0))
    params = tuple(w - LEARNING_RATE * g for w, g in zip(params, grads))
    return params, (loss, p)


@jax.jit
def train():
    X, y = make_data(N_SAMPLES, N_FEATURES, N_CLASSES)
    onehot = jax.nn.one_hot(y, N_CLASSES)
    params = (jnp.cos(jnp.arange(N_FEATURES * N_HIDDEN)).reshape(N_FEATURES, N_HIDDEN) * 0.1,
              jnp.zeros(N_HIDDEN),
              jnp.sin(jnp.arange(N_HIDDEN * N_CLASSES)).reshape(N_HIDDEN, N_CLASSES) * 0.1,
              jnp.zeros(N_CLASSES))
    params, (losses, p) = lax.scan(lambda q, _: epoch(q, X, y, onehot), params, None, length=EPOCHS)
    accuracy = (p[-1].argmax(axis=1) == y).mean()
    return {"losses": losses, "accuracy": accuracy, "W2": params[2]}


def main():
    return train()
