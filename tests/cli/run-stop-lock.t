#!/bin/sh
# run-stop-lock.t: one farm per joblog. A second gpupack on a joblog in use
# (a --resume started while the first runs, a new run, another farm over
# nodes) is refused in one line and changes nothing; a dead farm's lock never
# blocks (kill -9); the gpupacks of one farm over nodes share the joblog
# (tests/cli/run-nodes.t runs them). A GPUPACK_FARM_RUN name used before is
# refused, not run as "nothing to do".
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

PROBE="$TOOLS/farm-probe"
cd "$T" || exit 1
R() { $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }
sum() { cat "$@" 2>/dev/null | cksum; }
# records: the inputs the joblog has ended
records() { awk -F'\t' 'NR > 1 { print $1 }' "$1" | sort -n | tr '\n' ' '; }

# first: 2 probes of 30 s (ms from ./ms, so that --resume runs the same command, shorter)
echo 30000 >ms
# shellcheck disable=SC2016
$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 2 --joblog jl "$PROBE" log '$(cat ms)' 0 \
	::: 1 2 3 >/dev/null 2>&1 &
gpid=$!
i=0
while n=$(grep -c '^start' log 2>/dev/null); [ "${n:-0}" -lt 2 ] && [ $i -lt 400 ]; do sleep 0.02; i=$((i + 1)); done
before=$(sum jl jl.gpupack)
echo 10 >ms
# shellcheck disable=SC2016
run R -j 2 --joblog jl --resume "$PROBE" log '$(cat ms)' 0 ::: 1 2 3
is "$rc:$(printf '%s\n' "$err" | wc -l)" "255:1" "--resume while the farm runs: refused, one line"
like "$err" "^gpupack: run: --joblog 'jl': another farm runs on it \(gpupack pid $gpid .*\); wait for it to end, or use another joblog$" \
	"it says which farm and what to do"
run R -j 2 --joblog jl echo ::: a
is "$rc" 255 "a new run on it: refused too"
is "$(sum jl jl.gpupack)" "$before" "the joblog and its identity are untouched"
is "$(grep -c '^start' log)" 2 "and the second gpupack ran nothing"
run env GPUPACK_FARM_RUN=other "$GPUPACK" --sim "$TOPO/h100-80gb.topo" run --share timeslice --joblog jl echo ::: a
is "$rc" 255 "a farm over nodes on it: refused"

# the first is killed outright: its lock dies with it
kill -9 $gpid
wait $gpid 2>/dev/null
# shellcheck disable=SC2016
run R -j 2 --joblog jl --resume "$PROBE" log '$(cat ms)' 0 ::: 1 2 3
is "$rc" 0 "after kill -9 of the first, --resume runs (a dead farm's lock never blocks)"
is "$(records jl)" "1 2 3 " "every input recorded once"
ok "$([ ! -e jl.lock ]; echo $?)" "and the lock file went with the last farm"

# ---- GPUPACK_FARM_RUN: a name used before --------------------------------------------------------
rm -rf jl jl.* ran
env GPUPACK_FARM_RUN=r1 "$GPUPACK" --sim "$TOPO/h100-80gb.topo" run --share timeslice --joblog jl \
	--shell 'echo {} >>ran' ::: 1 2 3 >/dev/null 2>&1
is "$(sort ran | tr '\n' ' ')" "1 2 3 " "a farm named r1 ran everything"
: >ran
run env GPUPACK_FARM_RUN=r1 "$GPUPACK" --sim "$TOPO/h100-80gb.topo" run --share timeslice --joblog jl \
	--shell 'echo {} >>ran' ::: 1 2 3
is "$rc:$(printf '%s\n' "$err" | wc -l)" "255:1" "the same name again, without --resume: refused, one line"
like "$err" "GPUPACK_FARM_RUN=r1: a run of that name already ran on joblog jl; give this run a new name" \
	"it says why and what to do"
run env GPUPACK_FARM_RUN=r2 "$GPUPACK" --sim "$TOPO/h100-80gb.topo" run --share timeslice --joblog jl \
	--shell 'echo {} >>ran' ::: 1 2 3
is "$rc:$(sort ran | tr '\n' ' ')" "0:1 2 3 " "a new name starts from nothing: everything runs again"

# ---- the shards of one --shard split share a joblog (each shard once) -------------------------------
rm -rf js js.* ran
echo 3000 >ms
# shellcheck disable=SC2016
$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice --shard 0/2 --joblog js "$PROBE" slog '$(cat ms)' 0 \
	::: 1 2 3 4 >/dev/null 2>&1 &
s0=$!
i=0
while ! grep -q '^start' slog 2>/dev/null && [ $i -lt 400 ]; do sleep 0.02; i=$((i + 1)); done
# shellcheck disable=SC2016
run R --shard 0/2 --joblog js "$PROBE" slog '$(cat ms)' 0 ::: 1 2 3 4
is "$rc" 255 "shard 0 twice on one joblog: the second refused"
like "$err" "its shard 0 runs already" "it says why"
# shellcheck disable=SC2016
run R --shard 1/2 --joblog js "$PROBE" slog '$(cat ms)' 0 ::: 1 2 3 4
is "$rc" 0 "shard 1 beside shard 0 on the same joblog: runs, as before"
wait $s0
is "$(records js)" "1 2 3 4 " "the two shards recorded every input once"
