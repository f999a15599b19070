#!/bin/sh
# bench.t: `gpupack bench` end to end without a GPU. The workers are
# fake-work (a model of a GPU that speaks gpupack-work's command line), the
# MPS daemon is fake-mps-control (the control protocol, real processes and
# sockets), the machine is a simulated H100. What is checked is the
# orchestration: shared starts, the MPS daemon started and stopped, caps,
# retries of late workers, failed workers, statistics, the recommendation
# against the numbers, and the outputs (tables, JSON, SVG).
# $B and $TINY are word lists on purpose (SC2086).
# shellcheck source-path=SCRIPTDIR source=../lib.sh disable=SC2086
. "$(dirname "$0")/../lib.sh"

export GPUPACK_WORK="$TOOLS/fake-work"
export GPUPACK_MPS_CONTROL="$TOOLS/fake-mps-control"
export GPUPACK_MPS_TIMEOUT=5
export FAKE_WORK_DIR="$T/peers"
mkdir -p "$FAKE_WORK_DIR"
SIM="$GPUPACK_SRC/topologies/h100-80gb.topo"
B="$GPUPACK --sim $SIM bench"
# tiny and fast: one small size, P 1 and 2, exactly 3 repeats (the model's timing noise must
# not add any: noisy points are tested on their own)
TINY="--sizes 64 --procs 1,2 --repeats 3 --max-repeats 3"
UUID=$(sed -n "s/^ *uuid //p" "$SIM" | head -n 1)

# workers of this test still alive: each fake-work of a shared start leaves a
# file "<instant>.<pid>" in $FAKE_WORK_DIR
live_workers() {
	for f in "$FAKE_WORK_DIR"/*.*; do
		[ -f "$f" ] || continue
		p=${f##*.}
		kill -0 "$p" 2>/dev/null && printf '%s ' "$p"
	done
}
# the MPS daemons this test's bench started: pids recorded in its own state directory
daemon_pids() {
	for f in "$GPUPACK_STATE_DIR"/mps/*/daemon "$GPUPACK_STATE_DIR"/mps/*/pipe/nvidia-cuda-mps-control.pid; do
		[ -f "$f" ] || continue
		sed -n 's/^pid=//p; /^[0-9][0-9]*$/p' "$f" | head -n 1
	done
}
_bench_cleanup() {
	for p in $(live_workers) $(daemon_pids); do kill -9 "$p" 2>/dev/null; done
	return 0
}
CLEANUP=_bench_cleanup

live_daemons() {
	n=0
	for f in "$GPUPACK_STATE_DIR"/mps/*/daemon; do
		[ -f "$f" ] || continue
		p=$(sed -n 's/^pid=//p' "$f")
		[ -n "$p" ] && kill -0 "$p" 2>/dev/null && n=$((n + 1))
	done
	echo "$n"
}

# --- usage and environment errors: exit status, one line, nothing changed

usage_err() {
	name=$1
	shift
	run $B "$@"
	is "$rc" 2 "usage: $name exits 2"
	one_line "$err" "usage: $name says it in one line"
}
usage_err "unknown mode" --modes timeslice,warp
like "$err" "unknown mode 'warp'" "unknown mode is named"
usage_err "--procs 0" --procs 0
usage_err "--procs 1,1" --procs 1,1
usage_err "--sizes x" --sizes x
usage_err "--repeats 0" --repeats 0
usage_err "exercise 4 without a command" --exercises 4
usage_err "a command without exercise 4" --exercises 1 -- true
usage_err "a stray argument" foo
is "$(live_daemons)" 0 "usage errors start no daemon"

run $B --help
is "$rc" 0 "--help exits 0"
like "$out" "--quick" "--help lists --quick"

run env -u GPUPACK_SIM "$GPUPACK" bench --quick
is "$rc" 3 "no GPU: exit 3"
one_line "$err" "no GPU: one line"
like "$err" "no NVIDIA GPU found: " "no GPU: says so"

# a real gpupack-work (found beside gpupack or on PATH) under --sim: never started, the
# simulated GPU's model answers instead (tests/cli/bench-sim.t checks the model's run)
mkdir -p "$T/realbin"
printf '#!/bin/sh\necho started >>"%s/real-ran"\n' "$T" >"$T/realbin/gpupack-work"
chmod +x "$T/realbin/gpupack-work"
run env -u GPUPACK_WORK PATH="$T/realbin:$PATH" $B $TINY
is "$rc" 0 "--sim with a real gpupack-work: exit 0"
like "$out" "^SIMULATED: no GPU was measured" "--sim with a real gpupack-work: the model's run, said so"
ok "$([ ! -e "$T/real-ran" ]; echo $?)" "--sim with a real gpupack-work: no worker started"

run env GPUPACK_WORK="$T/no-such-worker" $B $TINY
is "$rc" 3 "missing worker binary: exit 3"
one_line "$err" "missing worker binary: one line"
like "$err" "GPUPACK_WORK=.*no-such-worker" "missing worker binary: named"

# --- a whole run, JSON

run $B $TINY --exercises 1,2,3 --cpu-ms 1 --json --out "$T/out" --svg "$T/svg"
is "$rc" 0 "tiny run of exercises 1, 2 and 3 succeeds"
printf '%s\n' "$out" >"$T/run.json"
jq -e . "$T/run.json" >/dev/null
ok $? "the output is one JSON document"
is "$(jq -r '.setup.gpu' "$T/run.json")" "NVIDIA H100 80GB HBM3" "setup: GPU name from the backend"
is "$(jq -r '.setup.uuid' "$T/run.json")" "$UUID" "setup: the device uuid"
is "$(jq -r '.setup.driver + " " + .setup.cuda' "$T/run.json")" "580.159.04 13.0" "setup: driver and CUDA"
like "$(jq -r '.setup.command' "$T/run.json")" "bench --sizes 64 --procs 1,2" "setup: the command line"
like "$(jq -r '.setup.date' "$T/run.json")" '^20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T' "setup: the date"
is "$(jq -r '[.exercises[].name] | join(",")' "$T/run.json")" "matmul,mixed,caps" "the three exercises"
is "$(jq -r '.exercises[1] | "\(.cpu_ms) \(.sizes[0]) \(.points | length)"' "$T/run.json")" "1 64 6" \
	"exercise 2: --cpu-ms, the middle size, every mode"
is "$(jq '[.exercises[0].points[] | "\(.mode)/\(.procs)"] | sort | join(" ")' "$T/run.json")" \
	'"batched/2 mps/1 mps/2 streams/2 timeslice/1 timeslice/2"' "exercise 1: every mode at P 2, one process and MPS at P 1"
is "$(jq '[.exercises[].points[] | select((.repeats | length) != 3)] | length' "$T/run.json")" 0 \
	"every point has its 3 repeats"
is "$(jq '[.exercises[].points[] | select(.median < .min or .median > .max)] | length' "$T/run.json")" 0 \
	"every median lies between min and max"
is "$(jq '[.exercises[].points[] | select(.error != null)] | length' "$T/run.json")" 0 "no point failed"
# the model: time-slicing does not add up, MPS does; so the daemon really served the clients
jq -e '.exercises[0].points as $p |
	($p[] | select(.mode == "mps" and .procs == 2) | .median) >
	1.5 * ($p[] | select(.mode == "timeslice" and .procs == 2) | .median)' "$T/run.json" >/dev/null
ok $? "MPS clients ran under the daemon (aggregate beats time-slicing)"
jq -e '.exercises[2].points | map(select(.mode == "mps-capped")) | length == 1' "$T/run.json" >/dev/null
ok $? "exercise 3 measures capped clients"
# exercise 3's uncapped points are exercise 1's, measured once
is "$(jq -c '[.exercises[2].points[] | "\(.mode)/\(.procs)=\(.reused_from)"] | sort' "$T/run.json")" \
	'["mps-capped/2=null","mps/1=matmul","mps/2=matmul","timeslice/1=matmul"]' \
	"exercise 3 reuses exercise 1's uncapped points, measures the capped ones"
jq -e '.exercises[0].points as $m | all(.exercises[2].points[] | select(.reused_from != null); . as $p |
	any($m[]; .mode == $p.mode and .procs == $p.procs and .size == $p.size and .repeats == $p.repeats and
	.iters == $p.iters))' "$T/run.json" >/dev/null
ok $? "the reused points are exercise 1's repeats"
jq -e '(.exercises[0].points[] | select(.mode == "mps" and .procs == 2) | .iters) ==
	(.exercises[2].points[] | select(.mode == "mps-capped") | .iters)' "$T/run.json" >/dev/null
ok $? "capped clients do exercise 1's iterations (one calibration per size)"
# the recommendation: within 5% of the best median of its exercise and size, and consistent
jq -e 'all(.exercises[]; . as $e | all($e.recommendations[]; . as $r |
	([$e.points[] | select(.size == $r.size and .median != null) | .median] | max) as $best |
	$r.value >= 0.95 * $best and $r.value >= 0.98 * $r.best and $r.best == $best and
	any($e.points[]; .size == $r.size and .mode == $r.mode and .procs == $r.procs and .median == $r.value)))' \
	"$T/run.json" >/dev/null
ok $? "each recommendation is a measured point within 2% (so 5%) of the best"
jq -e '.exercises[0] as $e | $e.recommendations[0] as $r |
	($e.points[] | select(.mode == "timeslice" and .procs == 1) | .median) as $one |
	(($r.gain_over_one - $r.value / $one) | fabs) < 1e-3 * $r.gain_over_one' "$T/run.json" >/dev/null
ok $? "the gain over one process is the ratio of the medians"
is "$(live_daemons)" 0 "the MPS daemon bench started is stopped"
is "$(live_workers)" "" "no worker process left"

# --- tables and files (of the run above)

for f in table.txt bench.json matmul.svg mixed.svg caps.svg; do
	[ -s "$T/out/$f" ]
	ok $? "--out writes $f"
done
cmp -s "$T/out/bench.json" "$T/run.json"
ok $? "bench.json is what --json printed"
like "$(cat "$T/out/table.txt")" "recommendation: " "the table has a recommendation"
like "$(cat "$T/out/table.txt")" "mode +P +TFLOP/s +min +max +speed-up +efficiency +spread" "the table's columns"
like "$(cat "$T/out/table.txt")" "exercise 3: MPS caps" "the table has every exercise"
for f in matmul mixed caps; do
	python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); r = d.documentElement; sys.exit(0 if r.tagName == "svg" and r.getAttribute("xmlns") == "http://www.w3.org/2000/svg" else 1)' "$T/out/$f.svg"
	ok $? "$f.svg is well-formed standalone SVG"
done
is "$(grep -c '<polyline class="line"' "$T/out/matmul.svg")" 4 "a line per mode"
grep -q 'class="limit" points=' "$T/out/matmul.svg"
ok $? "the limit is drawn"
is "$(cd "$T/svg" && echo *)" "caps.svg matmul.svg mixed.svg" "--svg writes only a chart per exercise"

# --- failures

run env FAKE_WORK_FAIL_MODE=batched $B $TINY --exercises 1 --json
is "$rc" 1 "a failing worker: exit 1"
like "$err" "matmul N=64 batched P=2: worker 1 of 1 \(pid [0-9]+\): not ok: CUDA error: out of memory" \
	"a failing worker: the point and the worker's error are named"
printf '%s\n' "$out" >"$T/fail.json"
is "$(jq -r '.failed_points' "$T/fail.json")" 1 "JSON counts the failed point"
is "$(jq '[.exercises[0].points[] | select(.error == null and (.repeats | length) == 3)] | length' "$T/fail.json")" 5 \
	"the other points are measured"

run env GPUPACK_MPS_CONTROL="$T/no-mps-control" $B $TINY --exercises 1 --json
is "$rc" 1 "no MPS control binary: exit 1"
printf '%s\n' "$out" >"$T/nomps.json"
is "$(jq '[.exercises[0].points[] | select(.error != null) | .mode] | unique | join(",")' "$T/nomps.json")" '"mps"' \
	"no MPS control binary: only the MPS points fail"
like "$(jq -r '.exercises[0].points[] | select(.mode == "mps") | .error' "$T/nomps.json" | head -n 1)" \
	"starting the MPS daemon: .*no-mps-control" "no MPS control binary: the reason is given"
is "$(printf '%s\n' "$err" | grep -c 'starting the MPS daemon')" 2 "no MPS control binary: one line per MPS point, no more"

run env FAKE_WORK_FAIL_MODE=mps $B $TINY --exercises 1 --json
is "$(printf '%s\n' "$out" | jq -r '[.exercises[0].points[] | select(.error != null) | .mode] | unique | join(",")')" \
	"mps" "MPS clients that fail: the MPS points fail"
like "$err" "mps P=1: starting 2 MPS clients \(.*fake-work serve\): worker 1 of 2 \(pid [0-9]+\): not ok: cudaErrorMps" \
	"MPS clients that cannot start: said, naming the worker"
is "$(printf '%s\n' "$err" | grep -c 'starting 2 MPS clients')" 2 "MPS clients that cannot start: one line per MPS point, started once"
is "$(live_daemons)" 0 "MPS clients that fail: the daemon is stopped anyway"

run env FAKE_WORK_FAIL_N=64 $B $TINY --exercises 1
is "$rc" 1 "a worker failing even alone (calibration): exit 1"
one_line "$err" "calibration failure: one line"
like "$err" "calibration: worker 1 of 1" "calibration failure: says where"

run env FAKE_WORK_BAD_SUM_N=64 $B $TINY --exercises 1
like "$err" "checksum mismatch" "a wrong result is not a measurement"

# a worker that needs longer to set up than the margin: the repeat runs again, later
run env FAKE_WORK_SETUP_MS=400 $B --sizes 64 --procs 1 --repeats 1 --margin 0.1 --modes timeslice --exercises 1 --json
is "$rc" 0 "late workers: still succeeds"
printf '%s\n' "$out" >"$T/late.json"
jq -e '[.exercises[0].points[] | .retries] | add > 0' "$T/late.json" >/dev/null
ok $? "late workers: the repeat was measured again"

# the margin is learned from the workers' t_ready: enough for their setup, and tight
run env FAKE_WORK_SETUP_MS=200 $B $TINY --exercises 1 --modes timeslice,mps --json
is "$rc" 0 "learned margins: succeeds"
printf '%s\n' "$out" >"$T/margin.json"
is "$(jq '[.exercises[0].points[] | select(.setup_s < 0.2 or .margin_s < 0.2)] | length' "$T/margin.json")" 0 \
	"learned margins: every point's setup (t_ready) and margin cover the workers' 200 ms setup"
jq -e '([.exercises[0].points[] | .setup_s] | max) as $s |
	all(.exercises[0].points[]; .margin_s <= 1.1 * $s + 0.045)' "$T/margin.json" >/dev/null
ok $? "learned margins: no more than the longest setup seen + 10% + 40 ms"

# a worker without t_ready (an older gpupack-work): lateness alone teaches the margin
run env FAKE_WORK_NO_READY=1 FAKE_WORK_SETUP_MS=400 $B --sizes 64 --procs 1 --repeats 1 --margin 0.1 \
	--modes timeslice --exercises 1 --json
is "$rc" 0 "no t_ready: still succeeds"
is "$(printf '%s\n' "$out" | jq '[.exercises[0].points[] | select(.retries > 0 and .setup_s == null)] | length')" 1 \
	"no t_ready: the late repeat was measured again"

# workers are kept: one group of plain processes and one of MPS clients, as many as the
# largest P, serve every point and repeat; capped clients get their own group per repeat
rm -f "$FAKE_WORK_DIR"/*
run env FAKE_WORK_EXIT_MS=200 $B --sizes 64 --procs 1,2,4 --repeats 2 --max-repeats 2 --json
is "$rc" 0 "kept workers: succeeds"
printf '%s\n' "$out" >"$T/kept.json"
is "$(jq '[.exercises[].points[] | select(.reused_from == null and (.repeats | length) != 2)] | length' "$T/kept.json")" 0 \
	"kept workers: every point measured twice"
# 4 plain + 4 MPS + capped: (2 + 4) clients in each of 2 repeats, and P more for each repeat of a
# capped point measured again (late: a loaded machine) and each lengthened run for its joules
extra=$(jq '[.exercises[].points[] | select(.mode == "mps-capped") |
	(.retries + .energy_lengthened_runs) * .procs] | add' "$T/kept.json")
again=$(jq '[.exercises[].points[] | select(.mode == "mps-capped") | .retries + .energy_lengthened_runs] | add' \
	"$T/kept.json")
is "$(find "$FAKE_WORK_DIR" -name 'serve.*' | wc -l | tr -d ' ')" $((20 + extra)) \
	"kept workers: 4 plain, 4 MPS, 12 capped processes in all (+$extra for late capped repeats)"
is "$(jq '.setup.worker_groups' "$T/kept.json")" $((6 + again)) "kept workers: 6 groups started (2 kept, 4 capped; +$again)"
# each serve file holds "<last t_start> <t_exit>": every worker ended (after its 200 ms teardown)
is "$(cat "$FAKE_WORK_DIR"/serve.* | awk 'NF == 2 && $2 > $1' | wc -l | tr -d ' ')" $((20 + extra)) \
	"kept workers: every one ended at its end of input"
is "$(live_workers)" "" "kept workers: no worker process left"

# an MPS server takes 48 clients: 32 kept ones make way for 32 capped ones, and come back (an
# energy counter that never moves: no lengthened runs for joules, whose groups would add theirs)
run env GPUPACK_SIM_ENERGY_STEP_MS=3600000 $B --sizes 64 --procs 1,32 --repeats 2 --max-repeats 2 --modes mps \
	--exercises 1,3 --json
is "$rc" 0 "48 MPS clients at most: succeeds"
# 1 plain + in each repeat: the kept MPS clients, then a capped group (and one more per late retry)
is "$(printf '%s\n' "$out" | jq '.setup.worker_groups - ([.exercises[].points[] | select(.mode == "mps-capped") |
	.retries] | add)')" 5 \
	"48 MPS clients at most: the kept clients end before each capped group and start again"

# a worker that dies between two commands: a point fails, its group is started again, the rest is measured
rm -f "$FAKE_WORK_DIR"/*
run env FAKE_WORK_DIE_AFTER=3 $B $TINY --exercises 1 --modes timeslice,batched --json
is "$rc" 1 "a worker that dies: exit 1"
like "$err" "worker [12] of 2 \(pid [0-9]+\): (exit status 3|printed nothing \(exit 3\))" "a worker that dies: said, with its exit status"
printf '%s\n' "$out" >"$T/die.json"
ok "$([ "$(jq '.setup.worker_groups' "$T/die.json")" -ge 2 ] && echo 0 || echo 1)" "a worker that dies: its group is started again"
is "$(jq '[.exercises[0].points[] | select(.error == null and (.repeats | length) != 3)] | length' "$T/die.json")" 0 \
	"a worker that dies: every point is failed or measured 3 times"
is "$(live_workers)" "" "a worker that dies: no worker process left"

# a worker whose teardown fails at the end: the point it served last is not trusted
run env FAKE_WORK_BAD_EXIT_N=64 $B $TINY --exercises 1 --modes timeslice --json
is "$rc" 1 "bad exit after the line: exit 1"
like "$err" "after its result: worker 1 of 2 \(pid [0-9]+\): exit status 3" \
	"bad exit after the line: said"

# noisy points: those whose first repeats spread more than 10% are measured up to --max-repeats
run env FAKE_WORK_NOISE_N=64 $B --sizes 64,128 --procs 1,2,4 --repeats 3 --max-repeats 7 --exercises 1 --json
is "$rc" 0 "noisy points: succeeds"
printf '%s\n' "$out" >"$T/noisy.json"
is "$(jq '[.exercises[0].points[] | select(.noisy)] | length > 0' "$T/noisy.json")" true "noisy points: some at N=64"
# the rule, from the JSON: first 3 repeats spread > 10% <=> noisy <=> 7 repeats
is "$(jq '[.exercises[0].points[] | (.repeats[0:3] | (max - min) / sort[1] > 0.10) as $n |
	select($n != .noisy or (.repeats | length) != (if $n then 7 else 3 end))] | length' "$T/noisy.json")" 0 \
	"noisy points: exactly those whose first 3 repeats spread > 10% have 7"
is "$(jq '.setup.max_repeats' "$T/noisy.json")" 7 "noisy points: max_repeats in the setup"
run env FAKE_WORK_NOISE_N=64 $B --sizes 64 --procs 1,2 --repeats 3 --max-repeats 3 --exercises 1
like "$out" "mode +P +TFLOP/s +min +max +speed-up +efficiency +spread +runs" "the table says how many runs"
is "$(printf '%s\n' "$out" | awk '$1 ~ /^(timeslice|mps|streams|batched)$/ && $(NF - 1) != 3' | wc -l | tr -d ' ')" 0 \
	"--max-repeats = --repeats: never more"
# joules: the simulated GPU's energy counter (70 W idle) moves only every GPUPACK_SIM_ENERGY_STEP_MS,
# as NVML's does. A J is trusted where the repeat spans >= 10 updates; else where the point's work,
# run once more lengthened (x energy_lengthened_by), spans them: that run's joules over the factor;
# else the point's repeats are summed, else it is - (never 0). The rule, from the JSON (the windows
# are what bench measured):
ENERGY_RULE='[.exercises[].points[] | select(.median != null) |
	(.energy_windows_s | map(select(. != null))) as $w | ($w | map(select(. < 10 * $p)) | length) as $short |
	(.energy_lengthened_by > 0 and .energy_lengthened_j != null and
	 .energy_lengthened_window_s >= 10 * $p) as $long |
	(if ($w | length) > 0 and $short == 0 then "alone" elif $long then "lengthened"
	 elif ($w | length) > 1 and ($w | add) >= 10 * $p then "summed" else "none" end) as $want |
	select(($want == "none") != (.energy_j == null) or (.energy_j != null and .energy_j <= 0) or
	       ($want == "summed") != (.energy_summed_repeats > 0) or
	       ($want == "lengthened" and (.energy_j - .energy_lengthened_j / .energy_lengthened_by |
	        if . < 0 then -. else . end) > 1e-4 * .energy_j))] | length'
# a 5 ms counter, repeats of 0.3 s (the workers sleep the time they say): each repeat's J stands alone
# (even where a loaded machine reads the counter so slowly that the period seen is up to 30 ms)
run env FAKE_WORK_REAL=1 GPUPACK_SIM_ENERGY_STEP_MS=5 $B $TINY --exercises 1 --time 0.3 --json
is "$rc" 0 "a 5 ms energy counter: succeeds"
printf '%s\n' "$out" >"$T/energy5.json"
is "$(jq '.setup.energy_period_s >= 0.0025 and .setup.energy_min_updates == 10' \
	"$T/energy5.json")" true "a 5 ms energy counter: its period measured at start"
is "$(jq --argjson p "$(jq .setup.energy_period_s "$T/energy5.json")" "$ENERGY_RULE" "$T/energy5.json")" 0 \
	"a 5 ms energy counter: every J follows the rule"
is "$(jq '[.exercises[0].points[] | select(.energy_j != null)] | length' "$T/energy5.json")" 6 \
	"a 5 ms energy counter, 0.3 s repeats: every point has its J"
# the same, printed: every row's J, the fewest-joules line names a mode or says none is clearly lower
run env FAKE_WORK_REAL=1 GPUPACK_SIM_ENERGY_STEP_MS=5 $B $TINY --exercises 1 --time 0.3
is "$(printf '%s\n' "$out" | awk '$1 ~ /^(timeslice|mps|streams|batched)$/ && !($NF > 0)' | wc -l | tr -d ' ')" 0 \
	"every measured row has its joules"
like "$out" "energy counter: updates every [0-9]+ ms \(steps of [0-9]+ mJ\): a J spans >= 10 updates" \
	"the counter's resolution is said"
like "$out" "fewest joules: ([a-z-]+, P=[0-9]+: [0-9.]+ J, at [0-9]+% of the best TFLOP/s|none clearly lower \([a-z-]+, P=[0-9]+: [0-9.]+ J and [a-z-]+, P=[0-9]+: [0-9.]+ J differ by no more than the spread, [0-9]+%\))" \
	"the fewest joules: named, or none clearly lower"
# a 300 ms counter and short repeats: what is too short reads -, never 0
run env GPUPACK_SIM_ENERGY_STEP_MS=300 $B $TINY --exercises 1 --json
is "$rc" 0 "a 300 ms energy counter: succeeds"
printf '%s\n' "$out" >"$T/energy300.json"
is "$(jq '.setup.energy_period_s >= 0.15' "$T/energy300.json")" true "a 300 ms energy counter: measured so"
is "$(jq --argjson p "$(jq .setup.energy_period_s "$T/energy300.json")" "$ENERGY_RULE" "$T/energy300.json")" 0 \
	"a 300 ms energy counter: every J follows the rule"
is "$(jq '[.exercises[0].points[] | select(.energy_j == 0)] | length' "$T/energy300.json")" 0 \
	"a 300 ms energy counter: no J of 0"
is "$(jq '[.exercises[0].recommendations[]? | select(.energy_clear and .energy_best_j == null)] | length' \
	"$T/energy300.json")" 0 "a mode is named for joules only with its J"
is "$(jq '[.exercises[0].points[] | select(.energy_lengthened_by > 0 and .energy_lengthened_window_s == null)] |
	length' "$T/energy300.json")" 0 "a 300 ms counter: each lengthened run says its window"
# a 20 ms counter and 0.1 s repeats (the workers sleep the time they say, so a window is never
# shorter than the work): each point's work runs once more, lengthened until one window spans 10
# updates, within 4 x 3 x 0.1 s; every J is then a number, and batched P=2, which does the work in
# half the time at the same power, is named for the fewest joules
run env FAKE_WORK_REAL=1 GPUPACK_SIM_ENERGY_STEP_MS=20 $B $TINY --exercises 1 --modes timeslice,batched \
	--time 0.1 --out "$T/energy20"
is "$rc" 0 "a 20 ms energy counter, 0.1 s repeats: succeeds"
is "$(jq --argjson p "$(jq .setup.energy_period_s "$T/energy20/bench.json")" "$ENERGY_RULE" \
	"$T/energy20/bench.json")" 0 "a 20 ms energy counter, 0.1 s repeats: every J follows the rule"
is "$(jq '[.exercises[0].points[] | select(.energy_j == null or .energy_j <= 0)] | length' \
	"$T/energy20/bench.json")" 0 "a 20 ms energy counter, 0.1 s repeats: every point has its J"
is "$(jq '[.exercises[0].points[] | select(.energy_lengthened_by > 0 and .energy_lengthened_window_s > 1.2)] |
	length' "$T/energy20/bench.json")" 0 "no lengthened run past its budget (4 x 3 x 0.1 s)"
is "$(awk '$1 ~ /^(timeslice|batched)$/ && !($NF > 0)' "$T/energy20/table.txt" | wc -l | tr -d ' ')" 0 \
	"a 20 ms energy counter, 0.1 s repeats: no row's J is -"
like "$(cat "$T/energy20/table.txt")" "fewest joules: batched, P=2: [0-9.]+ J, at [0-9]+% of the best TFLOP/s" \
	"a 20 ms energy counter, 0.1 s repeats: the fewest joules named"
like "$(cat "$T/energy20/table.txt")" "lengthened \(for at most 1.20 s\)" "the table says the lengthened runs' cap"
# the same with a 300 ms counter and 0.05 s repeats: 10 updates (3 s) are past the cap (0.6 s): no
# lengthened run, and every J is -, never 0
run env FAKE_WORK_REAL=1 GPUPACK_SIM_ENERGY_STEP_MS=300 $B $TINY --exercises 1 --modes timeslice,batched \
	--time 0.05 --out "$T/energy300cap"
is "$rc" 0 "a 300 ms energy counter, a 0.6 s cap: succeeds"
is "$(jq '[.exercises[0].points[] | select(.energy_j != null or .energy_lengthened_by != 0)] | length' \
	"$T/energy300cap/bench.json")" 0 "a 300 ms energy counter, a 0.6 s cap: nothing lengthened, no J"
is "$(awk '$1 ~ /^(timeslice|batched)$/ && $NF != "-"' "$T/energy300cap/table.txt" | wc -l | tr -d ' ')" 0 \
	"a 300 ms energy counter, a 0.6 s cap: every row's J is -"
run env GPUPACK_SIM_ENERGY_STEP_MS=x $B $TINY --exercises 1
is "$rc" 2 "GPUPACK_SIM_ENERGY_STEP_MS=x: a usage error"
like "$err" "GPUPACK_SIM_ENERGY_STEP_MS='x': expected milliseconds" "GPUPACK_SIM_ENERGY_STEP_MS=x: says why"
usage_err "--max-repeats below --repeats" --repeats 5 --max-repeats 4

# --- exercise 4: the user's command through gpupack run

# the task itself checks its environment: single quotes on purpose
# shellcheck disable=SC2016
run $B --procs 1,2 --repeats 1 --tasks 4 --json -- sh -c 'test -n "$GPUPACK_BENCH_TASK"'
is "$rc" 0 "exercise 4 runs a command through gpupack run"
printf '%s\n' "$out" >"$T/cmd.json"
is "$(jq -r '.exercises[0].name + " " + .exercises[0].unit' "$T/cmd.json")" "command tasks/h" "exercise 4 in tasks per hour"
is "$(jq '[.exercises[0].points[] | select(.median > 0)] | length' "$T/cmd.json")" 4 \
	"timeslice and mps at P 1 and 2 measured"
run $B --procs 1 --repeats 1 --tasks 2 -- false
is "$rc" 1 "exercise 4: failing tasks fail the point"
like "$err" "2 of 2 tasks failed" "exercise 4: says how many failed"
is "$(live_daemons)" 0 "no daemon left after exercise 4"

# --- Ctrl-C: workers and the daemon are stopped, exit 130

env FAKE_WORK_SETUP_MS=300 $B --sizes 64 --procs 1,2 --repeats 30 --margin 2 --modes mps \
	--exercises 1 >"$T/int.out" 2>"$T/int.err" &
bpid=$!
i=0
while [ "$(live_daemons)" -eq 0 ] && [ "$i" -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
is "$(live_daemons)" 1 "interrupt: the daemon is up"
kill -INT "$bpid"
wait "$bpid"
is "$?" 130 "interrupt: exit 130"
is "$(live_daemons)" 0 "interrupt: the daemon is stopped"
like "$(cat "$T/int.err")" "interrupted" "interrupt: says so"
i=0
while [ -n "$(live_workers)" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
is "$(live_workers)" "" "interrupt: no worker left"
