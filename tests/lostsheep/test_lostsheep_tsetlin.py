"""The Tsetlin automaton's transitions, pinned against hand-computed sequences."""

import numpy as np
import pytest

from hiddenweb.lostsheep.tsetlin import (
    TsetlinAutomaton,
    batch_durations,
    run_automaton,
    score_label,
    step_size,
)


def states_after(flags, states, twofold, start=None):
    sheep = TsetlinAutomaton(states, twofold, start)
    trace = []
    for flag in flags:
        sheep.read_word(flag)
        trace.append(sheep.state)
        if sheep.quit:
            break
    return trace, sheep.quit, sheep.f


def test_plain_s3_starts_at_b_and_quits_after_two_net_misses():
    # S=3 states: B=0, 1, Q=2, start=B. miss -> 1, hit -> 0, hit stays 0 (reflects at B),
    # hit 0, miss -> 1, miss -> 2 = Q at t=6: f=6.
    trace, quit_, f = states_after([0, 1, 1, 1, 0, 0, 0, 0], 3, False)
    assert trace == [1, 0, 0, 0, 1, 2]
    assert quit_ and f == 6


def test_plain_never_quitting_records_every_word_read():
    trace, quit_, f = states_after([1, 0, 1, 0, 1], 3, False)
    assert trace == [0, 1, 0, 1, 0]
    assert not quit_ and f == 5


def test_twofold_steps_halve_from_s_over_two():
    assert [step_size(100, True, k) for k in range(8)] == [50, 25, 12, 6, 3, 1, 1, 1]
    assert [step_size(3, True, k) for k in range(3)] == [1, 1, 1]
    assert step_size(100, False, 0) == 1


def test_twofold_s100_first_miss_moves_half_way():
    # start B=0; miss +50 -> 50; hit -25 -> 25; hit -12 -> 13
    trace, quit_, f = states_after([0, 1, 1], 100, True)
    assert trace == [50, 25, 13] and not quit_ and f == 3


def test_twofold_s100_from_b_needs_eight_misses():
    # Q = 99: 50, 75, 87, 93, 96, 97, 98, 99 -> Q at t=8 (the halving steps sum to 96 < 99)
    trace, quit_, f = states_after([0] * 12, 100, True)
    assert trace == [50, 75, 87, 93, 96, 97, 98, 99]
    assert quit_ and f == 8
    assert TsetlinAutomaton(100).states == 100  # S states: 0 .. 99


def test_middle_start_is_still_available():
    # from 50 a miss moves 50 states, past Q = 99: it stops on Q
    trace, quit_, f = states_after([0, 1], 100, True, start=50)
    assert trace == [99] and quit_ and f == 1
    with pytest.raises(ValueError):
        TsetlinAutomaton(3, start=2)  # Q is not a start
    with pytest.raises(ValueError):
        TsetlinAutomaton(1)  # B and Q need two states


def test_twofold_s100_hit_then_misses():
    # start B; hit -50 stays 0; misses +25 +12 +6 +3 +1 -> 25, 37, 43, 46, 47; hit -1 -> 46
    trace, quit_, f = states_after([1, 0, 0, 0, 0, 0, 1], 100, True)
    assert trace == [0, 25, 37, 43, 46, 47, 46]
    assert not quit_ and f == 7


def test_score_label_uses_stems_and_stop_words():
    q = frozenset({"contact", "phone"})
    # "the" is a stop-word; "contacting" stems to "contact" (hit, stays B), "office" moves 25
    assert score_label(q, "the contacting office", 100, True) == (False, 2)
    # 2F S=100 from B: 50, 75 -- a two-word label cannot make it quit
    assert score_label(q, "image gallery", 100, True) == (False, 2)
    # plain S=3 from B: 1, 2 = Q on the second miss (the paper's "Image Gallery" example)
    assert score_label(q, "image", 3, False) == (False, 1)
    assert score_label(q, "image gallery", 3, False) == (True, 2)
    assert score_label(q, "contact image gallery", 3, False) == (True, 3)


@pytest.mark.parametrize(
    "states,twofold,start", [(3, False, None), (100, True, None), (200, True, 0), (400, False, 0)]
)
@pytest.mark.parametrize("prefix", [0, 5, 64])
def test_batch_matches_one_by_one(states, twofold, start, prefix):
    rng = np.random.default_rng(7)
    texts = [rng.random(int(rng.integers(0, 80))) < rng.random() for _ in range(200)]
    offsets = np.concatenate(([0], np.cumsum([len(t) for t in texts])))
    quit_, f = batch_durations(np.concatenate(texts), offsets, states, twofold, start, prefix)
    expected = [run_automaton(t, states, twofold, start) for t in texts]
    assert list(zip(quit_.tolist(), f.tolist(), strict=True)) == expected


def test_start_readings_b_and_middle():
    from hiddenweb.lostsheep.tsetlin import start_state

    assert start_state(100, "B") == start_state(100, None) == 0
    assert start_state(100, "middle") == 49  # S//2 = 50 states from Q = 99
    assert start_state(3, "middle") == 1 and start_state(200, "middle") == 99
    with pytest.raises(ValueError):
        start_state(100, "center")
    # middle, 2F S=100: the first word's step S/2 reaches Q -> quits on a first miss, f = 1
    assert run_automaton([0, 0], 100, True, "middle") == (True, 1)
    # ... a first hit falls back to B, then steps 25, 12, 6, 3, 1, 1, ...: 57 misses to quit
    assert run_automaton([1] + [0] * 100, 100, True, "middle") == (True, 58)
    # from B the floors: 8 / 9 / 10 misses for S = 100 / 200 / 400
    assert [run_automaton([0] * 20, s, True, "B")[1] for s in (100, 200, 400)] == [8, 9, 10]
    # plain: S-1 net misses from B, S//2 from middle
    assert run_automaton([0] * 200, 100, False, "B") == (True, 99)
    assert run_automaton([0] * 200, 100, False, "middle") == (True, 50)
    # the paper's worked example: "image gallery" is pre-filtered by 2F S=100 only from middle
    q = frozenset({"contact", "phone"})
    assert score_label(q, "image gallery", 100, True, start="middle") == (True, 1)
    assert score_label(q, "contact gallery", 100, True, start="middle") == (False, 2)


@pytest.mark.parametrize("start", ["B", "middle"])
def test_batch_matches_one_by_one_for_both_readings(start):
    rng = np.random.default_rng(11)
    texts = [rng.random(int(rng.integers(0, 60))) < 0.7 for _ in range(300)]
    offsets = np.concatenate(([0], np.cumsum([len(t) for t in texts])))
    for states, twofold in ((3, False), (100, True), (400, True)):
        quit_, f = batch_durations(np.concatenate(texts), offsets, states, twofold, start, 5)
        expected = [run_automaton(t, states, twofold, start) for t in texts]
        assert list(zip(quit_.tolist(), f.tolist(), strict=True)) == expected
