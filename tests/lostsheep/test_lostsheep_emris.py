"""The EMRIS runner: deterministic for a fixed seed; OPTIMAL is the bound."""

import json

from hiddenweb.bench.lostsheep.cli import main
from hiddenweb.bench.lostsheep.emris import run_emris
from hiddenweb.bench.lostsheep.graphs import generate_site


def test_fixed_seed_is_deterministic():
    a = run_emris("ls2f", 100, 20, states=100, seed=3, progress=False)
    b = run_emris("ls2f", 100, 20, states=100, seed=3, progress=False)
    assert (a.accuracy, a.mean_downloads) == (b.accuracy, b.mean_downloads)


def test_optimal_always_finds_the_target_and_hmm_downloads_all():
    opt = run_emris("optimal", 100, 30, seed=1, progress=False)
    assert opt.accuracy == 1.0 and 2.0 <= opt.mean_downloads < 10
    hmm = run_emris("hmm", 100, 10, states=3, seed=1, progress=False)
    assert hmm.mean_downloads == 100.0


def test_every_page_is_reachable_from_the_start():
    import numpy as np

    g = generate_site(300, np.random.default_rng(0))
    seen, stack = {0}, [0]
    while stack:
        for kid in g.children(stack.pop()).tolist():
            if kid not in seen:
                seen.add(kid)
                stack.append(kid)
    assert len(seen) == g.n


def test_cli_json(capsys):
    assert main(["emris", "--nodes", "100", "--runs", "5", "--algorithm", "sim", "--json"]) == 0
    row = json.loads(capsys.readouterr().out.strip())
    assert {
        "algorithm",
        "states",
        "threshold",
        "nodes",
        "runs",
        "accuracy",
        "mean_downloads",
        "seed",
        "wall_seconds",
        "d",
        "start",
    } <= row.keys()
    assert row["nodes"] == 100 and row["runs"] == 5 and row["threshold"] == 0.75


def test_default_graph_has_cycles_and_the_evolving_one_none():
    import numpy as np

    from hiddenweb.bench.lostsheep.graphs import GraphParams

    g = generate_site(500, np.random.default_rng(1))
    src = np.repeat(np.arange(g.n), g.out_degree())
    assert (g.out_dst < src).any()  # links to older pages: the herder can loop back
    assert not (g.out_dst == src).any()
    old = generate_site(500, np.random.default_rng(1), GraphParams(evolving=True))
    src = np.repeat(np.arange(old.n), old.out_degree())
    assert (old.out_dst > src).all()


def test_links_are_not_listed_by_page_age_and_the_first_calibration_is_kept():
    import numpy as np

    from hiddenweb.bench.lostsheep.graphs import GraphParams

    g = generate_site(500, np.random.default_rng(2))
    kids = g.children(0)
    assert kids.size > 20 and (np.diff(kids) < 0).any()
    old = generate_site(500, np.random.default_rng(2), GraphParams(evolving=True,
                                                                   shuffle_links=False))
    assert (np.diff(old.children(0)) > 0).all()


def test_d_is_counted_as_the_paper_counts_it():
    # the paper's D: no start page (OPTIMAL: the path's edges), the random walk's steps (0.2 N)
    opt = run_emris("optimal", 100, 20, seed=2, progress=False)
    assert opt.d == opt.mean_downloads - 1
    rw = run_emris("random", 1000, 5, seed=2, progress=False)
    assert rw.d == 200 and rw.mean_downloads < 200  # distinct pages: the walk revisits
    ls = run_emris("ls2f", 100, 20, seed=2, progress=False, start="B")
    assert ls.d == ls.mean_downloads - 1
    hmm = run_emris("hmm", 100, 3, states=100, seed=2, progress=False)
    assert (hmm.d, hmm.mean_downloads) == (99, 100)


def test_grid_prints_both_start_readings_in_one_table(capsys):
    assert main(["emris", "--nodes", "100", "--runs", "4", "--algorithm", "ls2f"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith("LS2F S=100")]
    assert [r[3] for r in rows] == ["B", "middle"]
    assert "start=B:" in out and "start=middle:" in out and "0.76 / 12.52" in out


def test_maxdepth_sweep_rows_and_share_ended_at_maxdepth(capsys):
    from hiddenweb.bench.lostsheep.emris import run_grid

    res = run_grid([("ls2f", 100), ("sim", 0)], 100, [0.75], 12, seed=4, starts=("B",),
                   progress=False, sweep=(1, 40))
    by_depth = {r.maxdepth: r for r in res if r.algorithm == "ls2f"}
    assert sorted(by_depth) == [1, 20, 40]
    # one round: every run that did not reach the threshold ended at maxdepth (or stuck)
    assert by_depth[1].at_maxdepth > 0 and by_depth[1].d <= by_depth[40].d
    assert by_depth[40].at_maxdepth <= by_depth[1].at_maxdepth
    assert [r.maxdepth for r in res if r.algorithm == "sim"] == [20]
    assert main(["emris", "--nodes", "100", "--runs", "3", "--start", "B",
                 "--maxdepth-sweep", "5", "40"]) == 0
    out = capsys.readouterr().out
    assert "maxdepth sensitivity" in out
    sweep = out[out.index("maxdepth sensitivity"):].splitlines()
    assert [line.split()[4] for line in sweep if line.startswith("LS2F")] == ["5", "20", "40"]
