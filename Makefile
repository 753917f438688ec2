# `make demo` runs the main job, `make test` every check; both install what they need first.
# `make install PREFIX=...` installs libfloe, the C API (see ffi/Makefile); `FEATURES=train`
# (with LIBTORCH set) adds training and evaluation to it.
.PHONY: setup demo test install
PREFIX ?= /usr/local

setup:
	bash scripts/setup.sh

demo:
	bash scripts/demo.sh

test:
	bash scripts/test.sh

install:
	$(MAKE) -C ffi install PREFIX=$(PREFIX) FEATURES=$(FEATURES)
