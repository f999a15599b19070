#!/bin/sh
# bench-sim.t: `gpupack --sim FILE bench` works out of the box (issue 32: it
# asked for GPUPACK_WORK, then reported 315.7 TFLOP/s and 788% on an "H100"
# and recommended time-slicing). With no worker of one's own the simulated
# GPU's model (src/bench/model.c) gives every figure: no process runs, and
# the tables, the JSON and the charts all say "simulated"; no efficiency
# passes 100%, no rate the model's peak. A run on a real driver (here the
# fake NVML) says nothing of the kind.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

unset GPUPACK_WORK
# a gpupack-work on PATH that must never start: the model answers instead
mkdir -p "$T/bin"
printf '#!/bin/sh\necho ran >>"%s/ran"\nexit 1\n' "$T" >"$T/bin/gpupack-work"
chmod +x "$T/bin/gpupack-work"
export PATH="$T/bin:$PATH"

for topo in h100-80gb h200-141gb a100-40gb a30-24gb; do
	run "$GPUPACK" --sim "$topo" bench --quick --json
	is "$rc" 0 "$topo: bench --quick exits 0 without GPUPACK_WORK"
	is "$(printf '%s' "$out" | jq -r '.simulated, .setup.simulated')" "true
true" "$topo: the JSON says simulated, first thing and in setup"
	peak=$(printf '%s' "$out" | jq -r '.setup.model.peak_tflops')
	ok "$(printf '%s' "$out" | jq -e --argjson pk "$peak" '
		[.exercises[].points[] | select(.median != null)] as $p
		| ($p | length) > 0
		and all($p[]; .median < $pk)
		and all($p[]; .efficiency == null or .efficiency <= 1.0000001)' >/dev/null; echo $?)" \
	    "$topo: every rate below the peak ($peak TFLOP/s), no efficiency above 100%"
	is "$(printf '%s' "$out" | jq -r '.failed_points')" 0 "$topo: no point failed"
done
ok "$([ ! -e "$T/ran" ]; echo $?)" "the gpupack-work on PATH never ran"

# the figures the issue saw cannot come back: time-slicing never wins at N=2048 on an H100
run "$GPUPACK" --sim h100-80gb bench --quick --json
rec=$(printf '%s' "$out" | jq -r '.exercises[0].recommendations[] | select(.size == 2048) | .mode')
ok "$([ "$rec" != timeslice ]; echo $?)" "H100 N=2048: the recommendation is not time-slicing ($rec)"
max=$(printf '%s' "$out" | jq '[.exercises[].points[].median] | max')
ok "$(awk -v m="$max" 'BEGIN { exit !(m > 40 && m < 60) }'; echo $?)" \
    "H100: the best modelled point is an H100's SGEMM ($max TFLOP/s)"

# tables and charts
run "$GPUPACK" --sim h100-80gb bench --quick --out "$T/out"
is "$rc" 0 "--out: exit 0"
like "$(head -n 1 "$T/out/table.txt")" "^SIMULATED: no GPU was measured" "table.txt: the first line says simulated"
like "$(sed -n 2p "$T/out/table.txt")" "^model: FP32 peak 66.9 TFLOP/s \(132 SMs x 128 lanes x 2 x 1.98 GHz\)" \
    "table.txt: the model's peak and where it comes from"
is "$(grep -c '^SIMULATED exercise' "$T/out/table.txt")" 2 "table.txt: each exercise heading says simulated"
is "$(grep -c '^  simulated recommendation: ' "$T/out/table.txt")" 3 "table.txt: each recommendation says simulated"
like "$(tail -n 1 "$T/out/table.txt")" "^simulated, not measured: gpupack --sim h100-80gb bench --quick" \
    "table.txt: the last line says simulated, not measured"
for s in matmul caps; do
	grep -q '>SIMULATED, not measured: exercise' "$T/out/$s.svg"
	ok $? "$s.svg: the chart's title says simulated"
done
is "$(jq -r .simulated "$T/out/bench.json")" true "bench.json: simulated"

# a MIG device: its own SMs
run "$GPUPACK" --sim "$TOPO/h100-80gb-mig.topo" bench --quick --json
is "$(printf '%s' "$out" | jq -r '.setup.model.sms')" 60 "a MIG device (3g.40gb): the model has its 60 SMs"

# exercise 4 (the user's command) cannot run on a model
run "$GPUPACK" --sim h100-80gb bench -- true
is "$rc" 2 "--sim with a command: exit 2"
one_line "$err" "--sim with a command: one line"
like "$err" "exercise 4 runs your command on a GPU, and a simulated machine has none" "--sim with a command: says why"

# a worker of one's own (a test double) under --sim: labelled too, its figures its own
run env GPUPACK_WORK="$GPUPACK_BUILD/tests/tools/fake-work" FAKE_WORK_DIR="$T" \
    "$GPUPACK" --sim h100-80gb bench --sizes 64 --procs 1 --modes timeslice --exercises 1 --repeats 1
is "$rc" 0 "GPUPACK_WORK under --sim: exit 0"
like "$(printf '%s' "$out" | head -n 1)" "^SIMULATED: no GPU was measured. Every figure is the worker's own \(.*fake-work\)" \
    "GPUPACK_WORK under --sim: says whose figures they are"

# a real driver (the fake NVML): nothing says simulated
run env GPUPACK_NVML_LIB="$GPUPACK_BUILD/tests/fakenvml/libnvidia-ml.so.1" \
    GPUPACK_WORK="$GPUPACK_BUILD/tests/tools/fake-work" FAKE_WORK_DIR="$T" \
    "$GPUPACK" bench --sizes 64 --procs 1 --modes timeslice --exercises 1 --repeats 1 --json
is "$rc" 0 "a driver: exit 0"
is "$(printf '%s' "$out" | jq -r '.simulated, .setup.model')" "false
null" "a driver: simulated false, no model"
