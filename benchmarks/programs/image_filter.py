"""Image filter pipeline: Gaussian blur (separable, shifted slices), Sobel edges, contrast
normalisation and a threshold mask on a synthetic RGB image."""

import numpy as np

HEIGHT = 768
WIDTH = 1024
RADIUS = 4
SIGMA = 2.0


def make_image(h, w):
    y, x = np.mgrid[0:h, 0:w]
    img = np.empty((h, w, 3))
    img[..., 0] = 0.5 + 0.5 * np.sin(x / 37.0) * np.cos(y / 23.0)
    img[..., 1] = (x + y) / (h + w)
    img[..., 2] = 0.0
    img[h // 4:h // 2, w // 3:2 * w // 3, 2] = 1.0
    img += 0.05 * np.sin(np.arange(h * w * 3) * 0.7).reshape(h, w, 3)
    return np.clip(img, 0.0, 1.0)


def gaussian_weights(radius, sigma):
    offsets = np.arange(-radius, radius + 1)
    weights = np.exp(-offsets ** 2 / (2.0 * sigma ** 2))
    return weights / weights.sum()


def blur(img, weights):
    r = len(weights) // 2
    h, w = img.shape[:2]
    padded = np.pad(img, ((r, r), (r, r), (0, 0)), mode="edge")
    rows = np.zeros((h, w + 2 * r, img.shape[2]))
    for k in range(len(weights)):
        rows += weights[k] * padded[k:k + h, :, :]
    out = np.zeros_like(img)
    for k in range(len(weights)):
        out += weights[k] * rows[:, k:k + w, :]
    return out


def sobel(gray):
    p = np.pad(gray, 1, mode="reflect")
    gx = (p[:-2, 2:] + 2 * p[1:-1, 2:] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[1:-1, :-2] + p[2:, :-2])
    gy = (p[2:, :-2] + 2 * p[2:, 1:-1] + p[2:, 2:]) - (p[:-2, :-2] + 2 * p[:-2, 1:-1] + p[:-2, 2:])
    return np.hypot(gx, gy)


def normalise(channel):
    lo, hi = np.percentile(channel, [1.0, 99.0])
    out = (channel - lo) / (hi - lo)
    out[out < 0] = 0.0
    out[out > 1] = 1.0
    return out


def main():
    img = make_image(HEIGHT, WIDTH)
    blurred = blur(img, gaussian_weights(RADIUS, SIGMA))
    gray = blurred @ np.array([0.299, 0.587, 0.114])
    edges = sobel(gray)
    edges /= edges.max()
    contrast = np.stack([normalise(blurred[..., c]) for c in range(3)], axis=-1)
    mask = edges > 0.25
    highlighted = contrast.copy()
    highlighted[mask] = 1.0
    return {"blurred_mean": blurred.mean(axis=(0, 1)), "edges_sum": edges.sum(),
            "edge_fraction": mask.mean(), "contrast_mean": contrast.mean(axis=(0, 1)),
            "highlighted_row": highlighted[HEIGHT // 2]}
