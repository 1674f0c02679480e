"""The learning automaton against hand-computed updates (paper eqs. 2 and 4-7)."""

from __future__ import annotations

import math
import random

import pytest

from hiddenweb.dla.automaton import Automaton, entropy_step
from hiddenweb.dla.feedback import feedback
from hiddenweb.dla.kinds import form_signature, kinds, label_words, parent_kind, url_template


def three(**kw: float) -> Automaton:
    la = Automaton(**kw)
    for key in ("x", "y", "z"):
        la.add_action(key)
    return la


def test_entropy_step_eqs_6_7() -> None:
    # E(1/3) = 1/3 ln 3 + 2/3 ln 1.5 = 0.366204 + 0.270310 = 0.636514; a = E / (1 + E)
    assert entropy_step(1 / 3) == pytest.approx(0.6365141683 / 1.6365141683, abs=1e-10)
    # maximum at p = 1/2: E = ln 2, a = ln 2 / (1 + ln 2) = 0.409...
    assert entropy_step(0.5) == pytest.approx(math.log(2) / (1 + math.log(2)))
    assert entropy_step(0.0) == entropy_step(1.0) == 0.0


def test_reward_penalty_sequence_by_hand() -> None:
    la = three(b=0.1)
    assert la.probs() == pytest.approx([1 / 3, 1 / 3, 1 / 3])

    # 1. reward x: p_x = 1/3, E = 0.6365141683, a = E / (1 + E) = 0.3889451009
    #    p_x = 1/3 + a * 2/3 = 0.5926300673 ; p_y = p_z = (1 - a) / 3 = 0.2036849664
    la.reward("x")
    assert la.probs() == pytest.approx([0.5926300673, 0.2036849664, 0.2036849664], abs=1e-9)

    # 2. penalty y, b = 0.1, r = 3 (b / (r - 1) = 0.05):
    #    p_y = 0.2036849664 * 0.9 = 0.1833164697
    #    p_x = 0.05 + 0.9 * 0.5926300673 = 0.5833670605
    #    p_z = 0.05 + 0.9 * 0.2036849664 = 0.2333164697
    la.penalize("y")
    assert la.probs() == pytest.approx([0.5833670605, 0.1833164697, 0.2333164697], abs=1e-9)

    # 3. reward z: p_z = 0.2333164697, E = 0.5432527199, a = 0.3520179896
    #    p_z = 0.2333164697 + a * (1 - 0.2333164697) = 0.5032028647
    #    p_x = (1 - a) * 0.5833670605 = 0.3780113607 ; p_y = (1 - a) * 0.1833164697 = 0.1187857746
    la.reward("z")
    assert la.probs() == pytest.approx([0.3780113607, 0.1187857746, 0.5032028647], abs=1e-9)
    assert math.fsum(la.probs()) == pytest.approx(1.0, abs=1e-12)
    assert la.steps == 3


def test_fixed_step_eq_1() -> None:
    la = three(a=0.2, b=0.05)
    # reward y with a = 0.2: p_y = 1/3 + 0.2 * 2/3 = 0.4666666667 ; others 0.8 / 3 = 0.2666666667
    la.reward("y")
    assert la.probs() == pytest.approx([0.2666666667, 0.4666666667, 0.2666666667], abs=1e-9)


def test_new_action_enters_with_uniform_share() -> None:
    la = three(b=0.1)
    la.reward("x")  # [0.5926, 0.2037, 0.2037]
    assert la.add_action("w")
    # old ones scaled by 3/4, w = 1/4
    assert la.probs() == pytest.approx([0.4444725504, 0.1527637248, 0.1527637248, 0.25], abs=1e-9)
    assert not la.add_action("w")


def test_single_action_penalty_is_noop() -> None:
    la = Automaton(b=0.1)
    la.add_action("only")
    assert not la.penalize("only")
    assert la.probs() == [1.0]


def test_lazy_form_matches_direct_equations() -> None:
    """10,000 random updates on 40 actions: the O(1) lazy form equals the eqs. applied to p."""
    rng = random.Random(7)
    la = Automaton(b=0.02)
    direct: list[float] = []
    for i in range(40):
        la.add_action(i)
        r = len(direct)
        direct = [p * r / (r + 1) for p in direct] + [1 / (r + 1)]
    for _ in range(10_000):
        m = rng.randrange(40)
        if rng.random() < 0.3:
            la.reward(m)
            a = entropy_step(direct[m])
            direct = [p + a * (1 - p) if j == m else (1 - a) * p for j, p in enumerate(direct)]
        else:
            la.penalize(m)
            direct = [p * 0.98 if j == m else 0.02 / 39 + 0.98 * p
                      for j, p in enumerate(direct)]
        total = math.fsum(la.probs())
        assert total == pytest.approx(1.0, abs=1e-9)
        assert min(la.probs()) >= 0.0
    assert la.probs() == pytest.approx(direct, rel=1e-6, abs=1e-12)


def test_order_key_unchanged_by_other_updates_within_epoch() -> None:
    la = three(b=0.1)
    la.add_action("w")
    before = (la.order_key("y"), la.order_key("z"), la.epoch)
    la.reward("x")
    if la.epoch == before[2]:
        assert (la.order_key("y"), la.order_key("z")) == before[:2]
    assert la.prob("y") == pytest.approx(la.prob("z"))


def test_convergence_stops_learning() -> None:
    la = Automaton(a=0.5, b=0.01, converge_p=0.9)
    la.add_action("a")
    la.add_action("b")
    while not la.converged:
        la.reward("a")
    frozen = la.probs()
    assert frozen[0] > 0.9
    assert not la.reward("a") and not la.penalize("a")
    assert la.probs() == frozen


def test_state_round_trip() -> None:
    la = three(b=0.1)
    la.reward("x")
    la.penalize("y")
    other = Automaton(b=0.1)
    other.load_state(la.to_state())
    assert other.probs() == pytest.approx(la.probs())
    assert other.keys() == la.keys()


def test_choose_follows_probabilities() -> None:
    la = three(a=0.9, b=0.01)
    la.reward("z")
    rng = random.Random(1)
    picks = [la.choose(rng) for _ in range(2000)]
    assert picks.count("z") > 1700


def test_kinds() -> None:
    assert url_template("https://Ex.org/item/12/p3?z=1&a=2") == "ex.org/item/{n}/p{n}?a&z"
    # a single-page app's views are kinds of their own (hiddenweb.routes); an anchor is not
    assert url_template("http://h/#/runs/7/files?tab=2") == "h/#/runs/{n}/files"
    assert url_template("http://h/?v=1#/runs/7") == "h/#/runs/{n}?v"
    assert url_template("http://h/a/3#part-2") == "h/a/{n}"
    assert parent_kind("url:h/#/runs/{n}?v") == "url:h/#/runs/{n}"
    assert form_signature("https://ex.org/search?x=1", ["q", "cat", "q"]) == "ex.org/search|cat,q"
    assert label_words("Next page » Next") == ["next", "page"]
    link = {"kind": "link", "page": "p", "label": "Item 7", "form": None}
    assert kinds(link, "http://ex.org/item/7") == [
        "url:ex.org/item/{n}", "word:item", "links:public"]
    assert kinds(link, "http://ex.org/item/7", words="answers") == [
        "url:ex.org/item/{n}", "links:public"]
    # the same label on a page reached through a form: its words are kinds of their own
    assert kinds({**link, "hidden": True}, "http://ex.org/item/7") == [
        "url:ex.org/item/{n}", "hword:item"]
    form = {"kind": "form", "page": "p", "label": "Go",
            "form": {"signature": "ex.org/s|q", "fields": {"q": "smith"}}}
    assert kinds(form, "http://ex.org/s?q=smith") == ["form:ex.org/s|q", "fv:q=smith", "word:go"]


@pytest.mark.parametrize(
    ("status", "form_only", "new_content", "new_forms", "expected"),
    [
        (200, True, True, 0, "reward"),      # hidden new page
        (200, True, False, 0, "penalty"),    # hidden repeat / no results
        (200, False, True, 0, "penalty"),    # public page
        (200, False, True, 1, "reward"),     # public page showing a new form
        (200, False, False, 1, "penalty"),   # ... but a repeat of a page seen
        (404, True, True, 0, "penalty"),     # wasted action
        (503, True, True, 0, None),          # server trouble: neutral
        (None, False, False, 0, None),       # download failed: neutral
    ],
)
def test_feedback_table(status: int | None, form_only: bool, new_content: bool, new_forms: int,
                        expected: str | None) -> None:
    meta = {"hiddenweb_action": {"kind": "form", "page": "p", "label": "", "form": None}}
    assert feedback(meta, status=status, form_only=form_only, new_content=new_content,
                    new_forms=new_forms) == expected
    assert feedback({}, status=200, form_only=True, new_content=True) is None


def test_long_runs_stay_a_distribution() -> None:
    """Underflow and saturation: thousands of updates on one action, fixed and entropy steps."""
    for kw in ({"a": 0.5, "b": 0.01}, {"b": 0.01}):
        la = Automaton(**kw)
        for key in range(5):
            la.add_action(key)
        for _ in range(5000):
            la.reward(0)
        ps = la.probs()
        assert math.fsum(ps) == pytest.approx(1.0, abs=1e-12)
        assert ps[0] > 0.99 and min(ps) >= 0.0
        for _ in range(5000):
            la.penalize(0)
        ps = la.probs()
        assert math.fsum(ps) == pytest.approx(1.0, abs=1e-12)
        # penalties alone converge to the uniform vector's neighbourhood: p_0 -> small, others even
        assert ps[1] == pytest.approx(ps[4]) and ps[0] < ps[1]
