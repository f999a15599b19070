#!/bin/sh
# build.t: `make` is quiet by default (one short line per file made, no
# compiler command lines) and V=1 prints the commands; a plain `make` asks
# for every CPU.
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
cd "$GPUPACK_SRC" || exit 1
# as a user types it: not inside the make that runs the tests
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
run make --no-print-directory B="$T/b" "$T/b/src/util/str.o"
is "$rc" 0 "make one object: exit 0"
is "$out" "  CC    $T/b/src/util/str.o" "default: one short line, no compiler command"
rm -f "$T/b/src/util/str.o"
run make --no-print-directory B="$T/b" V=1 "$T/b/src/util/str.o"
like "$out" "^cc .*-c -o $T/b/src/util/str.o src/util/str.c|-Werror.*-o $T/b/src/util/str.o" "V=1: the compiler's command line"
# the flags a plain make runs with: -j (make -p prints them, building nothing)
run sh -c "make --no-print-directory -pq B='$T/b' all 2>/dev/null | grep '^MAKEFLAGS'"
like "$out" "-j[0-9]" "a plain make builds in parallel (MAKEFLAGS has -j)"
run sh -c "make --no-print-directory -pq B='$T/b' -j1 all 2>/dev/null | grep '^MAKEFLAGS'"
like "$out" "j1|^MAKEFLAGS :?= *$" "make -j1: as asked"
