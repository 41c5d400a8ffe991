"""``parity mutate``: IR mutants of accepted kernels, run through the oracles, to
measure them (docs/sim.md, "Mutation lane"). operators.py: the catalog of text
mutations; run.py: the oracles a mutant must pass and the kill-rate report;
cli.py: the command; match.py: ``--match`` (the sites whose honest line a pattern
matches, under a time limit)."""
