"""A two-layer MLP classifier trained by full-batch gradient descent with hand-written
backpropagation (softmax cross-entropy), weights updated in place."""

import numpy as np

N_SAMPLES = 2048
N_FEATURES = 32
N_HIDDEN = 64
N_CLASSES = 10
EPOCHS = 100
LEARNING_RATE = 0.5


def make_data(n, d, classes):
    X = np.sin(np.outer(np.arange(n), np.arange(1, d + 1)) * 0.01 + np.arange(d))
    y = (np.abs(X[:, :3].sum(axis=1)) * 4).astype(int) % classes
    return X, y


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def main():
    X, y = make_data(N_SAMPLES, N_FEATURES, N_CLASSES)
    onehot = np.zeros((N_SAMPLES, N_CLASSES))
    onehot[np.arange(N_SAMPLES), y] = 1.0
    W1 = np.cos(np.arange(N_FEATURES * N_HIDDEN)).reshape(N_FEATURES, N_HIDDEN) * 0.1
    b1 = np.zeros(N_HIDDEN)
    W2 = np.sin(np.arange(N_HIDDEN * N_CLASSES)).reshape(N_HIDDEN, N_CLASSES) * 0.1
    b2 = np.zeros(N_CLASSES)
    losses = []
    for _ in range(EPOCHS):
        h = np.maximum(X @ W1 + b1, 0.0)
        p = softmax(h @ W2 + b2)
        losses.append(-np.mean(np.log(p[np.arange(N_SAMPLES), y] + 1e-12)))
        grad_logits = (p - onehot) / N_SAMPLES
        dW2 = h.T @ grad_logits
        db2 = grad_logits.sum(axis=0)
        dh = grad_logits @ W2.T
        dh[h <= 0] = 0.0
        dW1 = X.T @ dh
        db1 = dh.sum(axis=0)
        W1 -= LEARNING_RATE * dW1
        b1 -= LEARNING_RATE * db1
        W2 -= LEARNING_RATE * dW2
        b2 -= LEARNING_RATE * db2
    accuracy = (p.argmax(axis=1) == y).mean()
    return {"losses": np.array(losses), "accuracy": accuracy, "W2": W2}
