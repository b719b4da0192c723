import numpy as np
import pytest

from smallstats import Scaler, apply_each, center, checked_log, jitter, moving_average, rescale


def test_rescale():
    assert np.allclose(rescale([1.0, 2.0, 3.0]), [0.0, 0.5, 1.0])
    assert np.allclose(rescale(np.arange(6.0).reshape(2, 3)).max(), 1.0)


def test_moving_average():
    assert np.allclose(moving_average(np.arange(6.0), 3), [1.0, 2.0, 3.0, 4.0])


def test_center():
    assert np.allclose(center([1.0, 2.0, 6.0]), [-2.0, -1.0, 3.0])


def test_checked_log():
    assert np.allclose(checked_log([1.0, np.e]), [0.0, 1.0])
    with pytest.raises(ValueError):
        checked_log([0.0, 1.0])


def test_scaler_counts_its_calls():
    scaler = Scaler(3.0)
    assert np.allclose(scaler.apply([1.0, 2.0]), [3.0, 6.0])
    assert scaler.seen == 1


def test_apply_each():
    assert apply_each(lambda v: v + 1, [1, 2]) == [2, 3]


def test_jitter_is_small():
    assert np.allclose(jitter(np.zeros(3)), 0.0, atol=0.1)
