# `make demo` runs the main job, `make test` every check; both install what they need first.
.PHONY: setup demo test

setup:
	bash scripts/setup.sh

demo:
	bash scripts/demo.sh

test:
	bash scripts/test.sh
