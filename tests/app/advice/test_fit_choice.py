"""app.advice.fit: C is chosen by cross-validated log-loss on train, so dev data sets only the thresholds."""

from __future__ import annotations

import numpy as np

from app.advice.fit import _accuracy, _choose_binary, _cv_loss


def _data(seed: int, n: int = 120, noise: int = 40) -> tuple[np.ndarray, list[str]]:
    rnd = np.random.default_rng(seed)
    y = rnd.integers(0, 2, n)
    signal = y + rnd.normal(0, 0.8, n)
    x = np.column_stack([signal, rnd.normal(0, 1, (n, noise))])
    return x, [str(bool(v)) for v in y]


def test_held_out_log_loss_prefers_a_penalty_when_most_features_are_noise() -> None:
    x, y = _data(0)
    assert _cv_loss(x, y, 0.1) < _cv_loss(x, y, 10.0)
    # with the signal alone, little penalty fits better than much
    assert _cv_loss(x[:, :1], y, 10.0) < _cv_loss(x[:, :1], y, 0.001)


def test_the_dev_data_moves_the_threshold_but_never_c() -> None:
    xt, yt = _data(1)
    xd, _ = _data(2)
    every_yes = [(row, True) for row in xd]
    every_no = [(row, False) for row in xd]
    _, spec = _choose_binary(xt, yt, every_yes, (0.05, 0.5, 0.95), _accuracy)
    _, other = _choose_binary(xt, yt, every_no, (0.05, 0.5, 0.95), _accuracy)
    assert spec["C"] == other["C"]
    assert (spec["threshold"], other["threshold"]) == (0.05, 0.95)


def test_a_class_too_rare_for_two_folds_gives_no_preference() -> None:
    x, y = _data(3, n=20)
    y = ["False"] * 19 + ["True"]
    assert _cv_loss(x, y, 0.1) == _cv_loss(x, y, 10.0) == 0.0
