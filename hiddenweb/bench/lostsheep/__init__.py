"""The lost-sheep paper's experiments (EMRIS): generated sites, baselines, the in-process
run and its HTTP check through the spider."""
