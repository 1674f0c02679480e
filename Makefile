# The two commands of the README: `make demo` and `make test`. Both install what they need.
.PHONY: install demo test lint bench

install:
	@bash scripts/install.sh

demo: install
	.venv/bin/hiddenweb demo --out out/demo-items.jsonl

test: install
	.venv/bin/ruff check .
	.venv/bin/pytest -q

lint: install
	.venv/bin/ruff check .

bench: install
	.venv/bin/hiddenweb bench coverage --pages 1000 --seed 1 --strategy bfs,dfs,oracle
