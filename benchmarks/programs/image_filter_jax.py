"""Hand-written JAX reference for image_filter.py: the same pipeline under one jax.jit, the
two blur passes as weighted sums of shifted slices, masks as jnp.where."""

import jax
import jax.numpy as jnp

HEIGHT = 768
WIDTH = 1024
RADIUS = 4
SIGMA = 2.0


def make_image(h, w):
    y, x = jnp.mgrid[0:h, 0:w]
    red = 0.5 + 0.5 * jnp.sin(x / 37.0) * jnp.cos(y / 23.0)
    green = (x + y) / (h + w)
    blue = jnp.zeros((h, w)).at[h // 4:h // 2, w // 3:2 * w // 3].set(1.0)
    img = jnp.stack([red, green, blue], axis=-1)
    img = img + 0.05 * jnp.sin(jnp.arange(h * w * 3) * 0.7).reshape(h, w, 3)
    return jnp.clip(img, 0.0, 1.0)


def gaussian_weights(radius, sigma):
    offsets = jnp.arange(-radius, radius + 1)
    weights = jnp.exp(-offsets ** 2 / (2.0 * sigma ** 2))
    return weights / weights.sum()


def blur(img, weights):
    r = weights.shape[0] // 2
    h, w = img.shape[:2]
    padded = jnp.pad(img, ((r, r), (r, r), (0, 0)), mode="edge")
    rows = sum(weights[k] * padded[k:k + h] for k in range(2 * r + 1))
    return sum(weights[k] * rows[:, k:k + w] for k in range(2 * r + 1))


def sobel(gray):
    p = jnp.pad(gray, 1, mode="reflect")
    gx = (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])
    gy = (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])
    return jnp.hypot(gx, gy)


def normalise(channel):
    lo, hi = jnp.percentile(channel, jnp.array([1.0, 99.0]))
    return jnp.clip((channel - lo) / (hi - lo), 0.0, 1.0)


@jax.jit
def pipeline():
    img = make_image(HEIGHT, WIDTH)
    blurred = blur(img, gaussian_weights(RADIUS, SIGMA))
    gray = blurred @ jnp.array([0.299, 0.587, 0.114])
    edges = sobel(gray)
    edges = edges / edges.max()
    contrast = jax.vmap(normalise, in_axes=-1, out_axes=-1)(blurred)
    mask = edges > 0.25
    highlighted = jnp.where(mask[..., None], 1.0, contrast)
    return {"blurred_mean": blurred.mean(axis=(0, 1)), "edges_sum": edges.sum(),
            "edge_fraction": mask.mean(), "contrast_mean": contrast.mean(axis=(0, 1)),
            "highlighted_row": highlighted[HEIGHT // 2]}


def main():
    return pipeline()
