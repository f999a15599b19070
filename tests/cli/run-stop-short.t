#!/bin/sh
# shellcheck disable=SC2046 # the inputs split on purpose
# run-stop-short.t: a farm short of processes (fork's EAGAIN under ulimit -u)
# or descriptors (ulimit -n) waits and tries again; it does not end while
# tasks can still run (GNU parallel waits and finishes too), and says so once.
# tests/unit/test_farm_stop.c drives the back-off and the give-up in
# simulated time.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

PROBE="$TOOLS/farm-probe"
NOFORK="$GPUPACK_BUILD/tests/preload/no-fork.so"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
cd "$T" || exit 1
R() { $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }
# audit JOBLOG LOG N: "records-per-input-not-one inputs-without-an-end"
audit() {
	bad=0 lost=0
	for s in $(seq "$3"); do
		[ "$(awk -F'\t' -v s="$s" 'NR > 1 && $1 == s' "$1" | wc -l)" -eq 1 ] || bad=$((bad + 1))
		awk -v s="$s" '$1 == "end" && $4 == s { f = 1 } END { exit !f }' "$2" || lost=$((lost + 1))
	done
	echo "$bad $lost"
}

# ---- fork fails (EAGAIN): at the start with nothing running, then every other start ---------------
rm -f jl log
NOFORK_FIRST=3 NOFORK_EVERY=2 LD_PRELOAD="$NOFORK" R -j 4 --joblog jl "$PROBE" log 50 0 ::: $(seq 12) \
	>/dev/null 2>errf
is "$?" 0 "fork failing now and then: the farm waits and finishes (exit 0)"
is "$(audit jl log 12)" "0 0" "every input ran to its end, one record each"
like "$(cat errf)" "^gpupack: run: warning: cannot start a task now \(cannot start '[^']*': Resource temporarily unavailable\): trying again" \
	"it says why"
is "$(wc -l <errf | tr -d ' ')" 1 "once"

# ---- out of descriptors (ulimit -n): each task needs two pipes ---------------------------------------
rm -f jl log
(ulimit -n 16 && R -j 8 --joblog jl "$PROBE" log 100 0 ::: $(seq 16)) >/dev/null 2>errf
is "$?" 0 "ulimit -n too low for -j 8: the farm runs what fits and finishes"
is "$(audit jl log 16)" "0 0" "every input ran to its end, one record each"
like "$(cat errf)" "Too many open files\): trying again" "it says why, once"

# ---- a real ulimit -u (root is not held to it: a user without other processes is) ------------------
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
	D=$(mktemp -d /tmp/gpupack-nproc.XXXXXX)
	chmod 755 "$D"
	cp "$GPUPACK" "$D/gpupack" && cp "$PROBE" "$D/probe" && cp "$TOPO/h100-80gb.topo" "$D/"
	mkdir "$D/w" && chmod 777 "$D/w"
	# gpupack, its watchdog and 3 tasks at most: -j 8 asks for more (an ASan build's leak check
	# needs a thread at exit, which the limit forbids: it is left to the other tests)
	setpriv --reuid=65534 --regid=65534 --clear-groups env GPUPACK_STATE_DIR="$D/w/state" \
		ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
		bash -c "ulimit -u 5 && $D/gpupack --sim $D/h100-80gb.topo run --share timeslice -j 8 \
		--joblog $D/w/jl $D/probe $D/w/log 100 0 ::: \$(seq 12)" >/dev/null 2>"$D/w/err"
	is "$?" 0 "ulimit -u 5 for -j 8: the farm waits for processes and finishes"
	is "$(audit "$D/w/jl" "$D/w/log" 12)" "0 0" "every input ran to its end, one record each"
	rm -rf "$D"
else
	ok 0 "# SKIP ulimit -u binds only a user other than root: needs root and setpriv to become one"
	ok 0 "# SKIP (the same)"
fi
