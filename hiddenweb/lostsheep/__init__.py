"""The lost sheep: a link-label pre-classifier for the exact match on rare item search (EMRIS).

Goodwin, "A solution to the exact match on rare item searches" (WIMS 2011), reading in
``shared/research/ALGORITHMS.md`` section 2. Modules:

- :mod:`.text`: tokenise, stop-words, PyStemmer stemming.
- :mod:`.tsetlin`: the Tsetlin automaton classifier (plain and twofold 2F) and
  :func:`~.tsetlin.score_label`, the per-link pre-filter a spider middleware can call.
- :mod:`.herder`: the herder loop over an abstract site (in-memory graph or Scrapy).
- :mod:`.graphs`: the paper's generated sites (copy model, Zipf degrees, labels, queries).
- :mod:`.baselines`: RW, SIM, DEG, SIMDEG, A*, FOCUSED, HMM (downloads all), OPTIMAL.
- :mod:`.emris`: the experiment runner; :mod:`.cli`: the ``bench emris`` sub-command;
  :mod:`.paper`: the paper's tables; :mod:`.calibrate`: the generator's fit to the baselines
  (issue 28, ``docs/lostsheep.md``). The last five live in ``hiddenweb.bench.lostsheep``.
"""

from hiddenweb.lostsheep.tsetlin import TsetlinAutomaton, run_automaton, score_label

__all__ = ["TsetlinAutomaton", "run_automaton", "score_label"]
