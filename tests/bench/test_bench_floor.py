"""The blind floor of the coverage benchmark (hiddenweb.bench.floor), on hand-made placements
and on a generated site."""

from types import SimpleNamespace

import pytest

from hiddenweb.bench.coverage import Truth
from hiddenweb.bench.floor import blind_floor_to_90, hidden_by_collection, order_floor_to_90
from hiddenweb.bench.provingground.site import SiteModel


def hand_site(main_host_pages, hosts_by_cid):
    return SimpleNamespace(main_host_pages=main_host_pages, collections=[
        SimpleNamespace(cid=cid, hosts=hosts) for cid, hosts in hosts_by_cid.items()])


def keys(cid, n):
    return {f"c{cid}/item/{i}" for i in range(n)}


def test_hidden_pages_are_counted_per_collection():
    assert hidden_by_collection(keys(0, 3) | keys(12, 2) | {"p/4"}) == {0: 3, 12: 2}


def test_floor_by_hand_two_pages_two_collections():
    # H = 10, 90 % = 9 pages, all in c0: c0's page is read first (1 read) or second (2 reads),
    # each with probability 1/2; the floor is 1 (home) + reads + 9 = 11 or 12, mean 11.5
    site = hand_site([10, 20], {0: [10], 1: [20]})
    floor = blind_floor_to_90(site, keys(0, 9) | keys(1, 1), trials=4000)
    assert floor["hidden_needed"] == 9
    assert floor["mean"] == pytest.approx(11.5, abs=0.05)
    assert (floor["p10"], floor["p90"]) == (11, 12)


def test_floor_counts_copies_on_main_host_pages_and_not_elsewhere():
    # c0 is on every candidate page: found by the first read whatever the order; a copy on a
    # deeper page (99, not a main host page) does not help c1
    site = hand_site([10, 20, 30], {0: [10, 20, 30], 1: [30, 99]})
    floor = blind_floor_to_90(site, keys(0, 9) | keys(1, 1), trials=500)
    assert (floor["mean"], floor["p10"], floor["p90"]) == (11, 11, 11)
    # now 90 % needs both: c1's one main host page is read 1st, 2nd or 3rd
    floor = blind_floor_to_90(site, keys(0, 5) | keys(1, 5), trials=6000)
    assert floor["mean"] == pytest.approx(1 + 2 + 9, abs=0.05)


def test_floor_refuses_a_site_it_does_not_model():
    site = hand_site([10], {0: [99]})
    with pytest.raises(ValueError, match="placement rule"):
        blind_floor_to_90(site, keys(0, 4))


def test_floor_of_a_generated_site_lies_between_every_hit_and_reading_every_form_page():
    site = SiteModel(pages=1000, seed=1)
    truth = Truth.of(site)
    floor = blind_floor_to_90(site, truth.hidden, trials=300)
    need = floor["hidden_needed"]
    assert need == -(-9 * len(truth.hidden) // 10)
    assert 1 + need < floor["p10"] <= floor["mean"] <= floor["p90"]
    assert floor["p90"] <= 1 + need + len(site.main_host_pages)
    assert floor == blind_floor_to_90(site, truth.hidden, trials=300)  # seeded


def test_a_runs_own_floor_follows_its_reading_order():
    # H = 10, need 9: c0 (5) on page 30 with a copy on 99, c1 (5) on page 20; home is 0
    site = hand_site([10, 20, 30], {0: [30, 99], 1: [20]})
    hidden = keys(0, 5) | keys(1, 5)
    # c1 found at the 3rd read, c0 at the 4th (its copy): 4 public reads + 9 hits
    assert order_floor_to_90(site, hidden, [0, 10, 20, 99, 30]) == {
        "floor": 13, "public_reads": 4, "hidden_needed": 9}
    # found by the last page read: it counts
    assert order_floor_to_90(site, hidden, [0, 30, 20])["floor"] == 3 + 9
    # c0's pages never read: 90 % was out of its reach
    assert order_floor_to_90(site, hidden, [0, 10, 20]) is None
