"""app.advice.fit: C is chosen by cross-validated log-loss on train, so dev data sets only the thresholds."""

from __future__ import annotations

import numpy as np

from app.advice.fit import _accuracy, _choose_binary, _cv_loss, _standardise, choose_value_bar


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


def test_the_columns_after_the_named_ones_are_standardised_and_weighted_only_with_a_tail_weight() -> None:
    rnd = np.random.default_rng(4)
    x = np.column_stack([rnd.normal(5, 2, 200), rnd.normal(3, 4, 200)])
    mean, scale = _standardise(x, 1, 1.0)
    assert (mean[1], scale[1]) == (0.0, 1.0)  # vocabulary columns stay 0/1
    mean, scale = _standardise(x, 1, 1.0, tail=0.5)
    assert abs(mean[1] - x[:, 1].mean()) < 1e-9 and abs(scale[1] - 2 * x[:, 1].std()) < 1e-9
    assert abs(scale[0] - x[:, 0].std()) < 1e-9  # the named columns keep their own weight


def test_the_weight_of_an_embedding_block_is_chosen_by_cross_validation_on_train() -> None:
    # the signal sits in the block after the first (noise) column: a heavier block fits better held out
    rnd = np.random.default_rng(5)
    y = rnd.integers(0, 2, 200)
    x = np.column_stack([rnd.normal(0, 1, 200), y + rnd.normal(0, 0.3, 200), rnd.normal(0, 1, 200)])
    labels = [str(bool(v)) for v in y]
    light = _cv_loss(x, labels, 0.03, dense=1, tail=0.01)
    heavy = _cv_loss(x, labels, 0.03, dense=1, tail=1.0)
    assert heavy < light
    dev = [(row, bool(v)) for row, v in zip(x, y, strict=True)]
    _, spec = _choose_binary(x, labels, dev, (0.5,), _accuracy, dense=1, tails=(0.01, 1.0))
    assert spec["text_weight"] == 1.0


def test_a_minimum_probability_is_kept_only_when_its_dev_gain_is_outside_the_noise() -> None:
    from app.advice.fit import choose_min_probability

    base = np.r_[np.ones(60), np.zeros(40)]
    slightly = base.copy()
    slightly[60:62] = 1  # two dev texts more: inside the noise
    clearly = base.copy()
    clearly[60:80] = 1  # twenty more, none lost
    assert choose_min_probability({0.0: base, 0.55: slightly}) == 0.0
    assert choose_min_probability({0.0: base, 0.45: clearly, 0.55: clearly}) == 0.45
    assert choose_min_probability({0.0: base, 0.55: base}) == 0.0


def test_the_value_bar_separates_platform_questions_from_value_questions_and_ties_go_high() -> None:
    # value questions up to 0.86, platform questions from 0.95: the highest bar that keeps every one right
    bar, right = choose_value_bar([0.7, 0.86, 0.95, 0.99], [False, False, True, True], 0.65)
    assert (bar, right) == (0.95, 4)
    # no platform question among them: never sure (1.0 is still below a probability of exactly 1)
    assert choose_value_bar([0.7, 0.9], [False, False], 0.65) == (1.0, 2)
    # only platform questions: the highest bar below the least sure one, never below the model's threshold
    assert choose_value_bar([0.97, 0.99], [True, True], 0.65)[0] == 0.97
    assert choose_value_bar([0.3], [True], 0.65) == (1.0, 0)  # none right at any bar: never sure
