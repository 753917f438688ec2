#!/usr/bin/env bash
# The C API's checks, from outside the source tree as a C/C++ user meets it:
#   1. `make -C ffi install` into a scratch prefix (libraries, headers, pkg-config, CMake files);
#   2. the C test suite against the installed copy, linked with the shared library and with the
#      static one, under valgrind (no errors, no leaks), and built with ASan + UBSan;
#   3. the header's names: every one prefixed (check_names.py), and a program's own names
#      (BAD_UTF8, ...) beside it; a plain CPU host under valgrind's default leak kinds with the
#      installed suppression file;
#   4. a C++ file that includes both headers twice, and the C++ wrapper's example;
#   5. a CMake project (find_package) and a plain `cc $(pkg-config ...)` program, both outside
#      the tree;
#   6. the C examples, briefly.
# Run by scripts/test.sh; needs cc, c++, cmake, pkg-config, valgrind and python3 (setup.sh
# installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/floe-capi.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PREFIX=$WORK/prefix
step() { echo "== c-api: $*"; }

step "install into $PREFIX"
make -s -C ffi install PREFIX="$PREFIX" TARGET_DIR="$TARGET_DIR"
# The plugins the tests load: a failing C plugin and a panicking Rust one (error paths), a C
# engineer (the design limits it is given) and a C level sampler.
cargo build --release -q -p floe-example-faulty
cc -shared -fPIC -O1 -I "$PREFIX/include" -o "$WORK/libc_failing.so" plugins/examples/c/failing.c
cc -shared -fPIC -O1 -I "$PREFIX/include" -o "$WORK/libc_engineer.so" plugins/examples/c/engineer.c
cc -shared -fPIC -O1 -I "$PREFIX/include" -o "$WORK/libc_level_sampler.so" plugins/examples/c/level_sampler.c
FAULTY=$TARGET_DIR/release/libfloe_example_faulty.so
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
CFLAGS_FLOE=$(pkg-config --cflags floe)
RUN_ARGS=("$WORK/libc_failing.so" "$FAULTY" "$WORK" "$WORK/libc_engineer.so" "$WORK/libc_level_sampler.so")

step "C test suite, shared library, with the GPU engine against the CPU engine"
cc -std=c11 -Wall -Wextra -Werror -O1 -g $CFLAGS_FLOE -o "$WORK/test_shared" ffi/tests/c/test_api.c \
    $(pkg-config --libs floe) -Wl,-rpath,"$PREFIX/lib"
# setup.sh installed Mesa's lavapipe, so under the test command an adapter must be found.
FLOE_TEST_GPU=${FLOE_TEST_GPU:-$([ "${FLOE_REQUIRE_GPU:-0}" = 1 ] && echo require || echo 1)} \
    "$WORK/test_shared" "${RUN_ARGS[@]}"

step "C test suite, static library"
cc -std=c11 -Wall -Wextra -Werror -O1 -g $CFLAGS_FLOE -o "$WORK/test_static" ffi/tests/c/test_api.c \
    "$PREFIX/lib/libfloe.a" $(pkg-config --static --libs-only-l floe | sed 's/-lfloe//')
"$WORK/test_static" "${RUN_ARGS[@]}"

step "C test suite under valgrind (errors and leaks are failures)"
# Rust's standard library and rayon keep a few allocations for the process's life (thread
# pools, thread-locals): those are "still reachable", not leaks. Definite and indirect leaks,
# and every memory error, fail; the installed suppression file (ffi/share/valgrind.supp) holds
# what libfloe keeps for the process's life by design (see its comments).
SUPPRESSIONS=$(pkg-config --variable=valgrind_suppressions floe)
valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --suppressions="$SUPPRESSIONS" \
    --show-leak-kinds=definite,indirect "$WORK/test_shared" "${RUN_ARGS[@]}"

step "C test suite with AddressSanitizer and UndefinedBehaviorSanitizer"
cc -std=c11 -Wall -Wextra -Werror -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
    -fno-sanitize-recover=all $CFLAGS_FLOE -o "$WORK/test_asan" ffi/tests/c/test_api.c \
    $(pkg-config --libs floe) -Wl,-rpath,"$PREFIX/lib"
# allocator_may_return_null: the suite asks for pools no machine holds and expects
# FLOE_STATUS_TOO_LARGE, which needs malloc to say no rather than ASan to stop the program.
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 LSAN_OPTIONS=suppressions="$(pkg-config --variable=lsan_suppressions floe)" \
    "$WORK/test_asan" "${RUN_ARGS[@]}"

step "the header's names: every one prefixed, and a program's own names beside them"
python3 ffi/tests/c/check_names.py cc "$PREFIX/include"
cc -std=c11 -Wall -Wextra -Werror $CFLAGS_FLOE -o "$WORK/namespace" ffi/tests/c/namespace.c \
    $(pkg-config --libs floe) -Wl,-rpath,"$PREFIX/lib"
"$WORK/namespace"

step "a plain CPU host under valgrind's default leak kinds, with the installed suppressions"
# As docs/c-api-notes.md tells a user to build and check a program against a prefix outside the
# loader's path: the rpath from pkg-config's libdir, the suppression file from its variable.
cc -std=c11 -Wall -Wextra -Werror -O1 -g $CFLAGS_FLOE -o "$WORK/plain_host" ffi/tests/c/plain_host.c \
    $(pkg-config --libs floe) -Wl,-rpath,"$(pkg-config --variable=libdir floe)"
valgrind --quiet --leak-check=full --error-exitcode=9 --suppressions="$SUPPRESSIONS" "$WORK/plain_host"

step "C++: both headers twice, and the floe.hpp example"
c++ -std=c++17 -Wall -Wextra -Werror $CFLAGS_FLOE -o "$WORK/twice" ffi/tests/c/twice.cpp \
    $(pkg-config --libs floe) -Wl,-rpath,"$PREFIX/lib"
"$WORK/twice"
c++ -std=c++17 -Wall -Wextra -Werror -O1 $CFLAGS_FLOE -o "$WORK/stepping" ffi/examples/cpp/stepping.cpp \
    $(pkg-config --libs floe) -Wl,-rpath,"$PREFIX/lib"
"$WORK/stepping"

step "consumers outside the tree: CMake find_package, and cc with pkg-config"
cp -r ffi/tests/consumers/cmake "$WORK/cmake-src"
cmake -S "$WORK/cmake-src" -B "$WORK/cmake-build" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_RPATH="$PREFIX/lib" >/dev/null
cmake --build "$WORK/cmake-build" >/dev/null
"$WORK/cmake-build/consumer_shared"
"$WORK/cmake-build/consumer_static"
cp ffi/tests/consumers/cmake/main.c "$WORK/pc_main.c"
(cd "$WORK" && cc -std=c11 -o pc_consumer pc_main.c $(pkg-config --cflags --libs floe) -Wl,-rpath,"$PREFIX/lib" \
    && ./pc_consumer)

step "C examples"
for ex in step_random verify_answers curriculum_loop; do
    cc -std=c11 -Wall -Wextra -Werror -O2 $CFLAGS_FLOE -o "$WORK/$ex" "ffi/examples/c/$ex.c" \
        $(pkg-config --libs floe) -Wl,-rpath,"$PREFIX/lib"
done
"$WORK/step_random" 16 0.2 4 1024 0.5
"$WORK/verify_answers" 60 2
"$WORK/curriculum_loop" difficulty-scaling 2
step "all passed"
