#!/bin/sh
# shellcheck disable=SC2016,SC2086 # jq programs are literal; option lists split on purpose
# run-auto.t: -j auto (the default) against a simulated device. fake-work's
# farm tasks share one device (tests/tools/fakedev.h) whose speed for k tasks
# at once, SM activity, memory and host CPUs each test scripts; the fake NVML
# reports that device (busy share, GPM SM activity, memory, the tasks as MPS
# clients) and $GPUPACK_PROC_DIR the simulated host. So the controller sees
# signals that answer to its count. Checked: that those signals reach the
# controller and move the count (where it settles on each curve is
# tests/unit/test_farm_control.c's, in simulated time); tasks that run out of
# memory rerun, every task ending once in the joblog; --mem, the 48 MPS
# clients, free memory, --total and -j auto:N as bounds; a driver that lists
# no processes (blind: footprints from the device's memory); counts remembered
# per command, and files it must ignore; -j's errors. Nothing here depends on
# how fast the machine is: a loaded one only moves the counts within the ranges.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"
. "$GPUPACK_SRC/tests/cli/mps-lib.sh"

cd "$T" || exit 1
FAKE_LIB="$GPUPACK_BUILD/tests/fakenvml/libnvidia-ml.so.1"
D="$T/dev"
WORK="$TOOLS/fake-work"
unset FAKENVML_MACHINE FAKENVML_FAIL FAKENVML_OLD FAKENVML_NPROCS

# device KEY=VALUE...: a fresh simulated device (fakedev.h's config keys)
device() {
	rm -rf "$D"
	mkdir -p "$D/proc"
	printf '%s\n' "$@" >"$D/config"
}

# A ARGS...: gpupack run on the simulated device (MPS, through the control double)
A() {
	FAKENVML_DEVICE="$D" FAKE_DEVICE="$D" GPUPACK_PROC_DIR="$D/proc" GPUPACK_NVML_LIB="$FAKE_LIB" \
		$GPUPACK run --share mps --json "$@"
}

# jqd FILTER: FILTER on the last line of $out (the summary), device 0
jqd() { printf '%s\n' "$out" | tail -n 1 | jq -r ".devices[0]$1"; }
whys() { printf '%s\n' "$out" | tail -n 1 | jq -r '.devices[0].auto.decisions[].why' | sort -u | tr '\n' ';'; }
# decisions: the controller's decisions of the last run, for a failure's diagnosis
decisions() {
	printf '%s\n' "$out" | tail -n 1 |
		jq -r '.devices[0].auto.decisions[] | "#   \(.t) \(.limit) gpu \(.gpu) cpu \(.cpu) \(.why)"'
}
limits() { printf '%s\n' "$out" | tail -n 1 | jq -r '[.devices[0].auto.decisions[].limit] | max'; }
between() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

# --- the signals reach the controller --------------------------------------------------------
# One real-time check: the curves' shapes (where the count settles, why it stops) are
# tests/unit/test_farm_control.c's, in simulated time, on these same devices. Here, on a device
# where 4 tasks keep the SMs two-thirds busy (6 fill them), the controller reads the device's
# SM activity and the simulated host's CPUs, and raises the count for the room it sees. Margins
# that hold on a loaded machine: it rises, and it does not run to the 48 clients.
device curve=1:1,6:6 sm=1:0.17,6:1 start_ms=100 task_mib=700 dev_mib=40000
run A "$WORK" farm --work 0.3 ::: $(seq 60)
is "$rc" 0 "the farm succeeds"
is "$(printf '%s\n' "$out" | tail -n 1 | jq -r .done)" 60 "every task done"
g=$(printf '%s\n' "$out" | tail -n 1 | jq -r '[.devices[0].auto.decisions[].gpu] | max')
c=$(printf '%s\n' "$out" | tail -n 1 | jq -r '[.devices[0].auto.decisions[].cpu] | max')
jq -n -e "$g > 0 and $g <= 1 and $c >= 0 and $c <= 1" >/dev/null
ok $? "the decisions carry the device's SM activity ($g at most) and the host's CPUs ($c at most)"
m=$(limits)
case $(whys) in *"GPU not saturated"* | *"GPU idle"*) r=$((m > 4 ? 0 : 1)) ;; *) r=1 ;; esac
ok $r "the count rises for the room the GPU has (to $m; $(whys))"
[ $r = 0 ] || decisions
[ "$m" -lt 48 ]
ok $? "and stops short of the 48 clients (at most $m)"

# --- out of memory ---------------------------------------------------------------------------
# five tasks fit; a remembered count of 8 starts too high: three run out of memory
device curve=1:1,8:8 sm=1:0.12,8:1 start_ms=100 task_mib=900 dev_mib=5000
rm -rf "$GPUPACK_STATE_DIR/auto"
run A "$WORK" farm --work 1.5 ::: 1
key=$(ls "$GPUPACK_STATE_DIR/auto")
printf 'gpupack-auto 1 %s 8\n' "$key" >"$GPUPACK_STATE_DIR/auto/$key"
# (tasks of 1.5 s: a task that ran out of memory is a rerun only while others hold the device
# when gpupack reaps it; with short ones, on a loaded machine, they could all be gone by then)
run A --joblog jl "$WORK" farm --work 1.5 ::: $(seq 12)
is "$rc" 0 "out of memory: the farm still succeeds (no --retries)"
is "$(jqd .auto.start)" 8 "it started from the remembered count, 8"
like "$(whys)" "out of memory" "the controller saw the tasks run out of memory"
r=$(printf '%s\n' "$out" | tail -n 1 | jq -r '.rerun_reasons["out of memory"] // 0')
[ "$r" -ge 1 ]
ok $? "tasks out of memory ran again, for gpupack's own reason ($r reruns)"
is "$(printf '%s\n' "$out" | tail -n 1 | jq -r .retries)" 0 "and spent no --retries"
is "$(awk -F'\t' 'NR > 1 { print $1 }' jl | sort -n | uniq | wc -l | tr -d ' ')" 12 "every task is in the joblog"
is "$(awk -F'\t' 'NR > 1' jl | wc -l | tr -d ' ')" 12 "exactly once"
is "$(awk -F'\t' 'NR > 1 && $7 != 0' jl | wc -l | tr -d ' ')" 0 "and none failed"

# a task that runs out of memory alone is its own failure, not the packing's
device curve=1:1 sm=1:0.1 start_ms=50 task_mib=900 dev_mib=800
run A --joblog jl2 "$WORK" farm --work 0.1 ::: 1
is "$rc" 1 "out of memory alone: the task fails"
is "$(printf '%s\n' "$out" | tail -n 1 | jq -r .reruns)" 0 "and is not rerun"

# --- blind: a driver that lists no processes -----------------------------------------------------
# the process lists fail (NOT_SUPPORTED, as where the driver hides other containers' pids): every
# running task counts as on the GPU, and a task's footprint is the device memory the farm added per
# task running, the largest seen (fake-work tasks take 700 MiB once on the GPU, none before). The
# tasks stay on the GPU for seconds, several controller ticks: a task still starting or already
# done but not yet reaped counts as running with no memory, and on a loaded CI machine (ASan's exit
# is slow) short tasks could spend every tick there. Nothing remembered from the runs above (their
# counts and footprints, 900 MiB ones among them).
device curve=1:1,6:6 sm=1:0.17,6:1 start_ms=100 task_mib=700 dev_mib=40000
rm -rf "$GPUPACK_STATE_DIR/auto"
export FAKENVML_FAIL=nvmlDeviceGetComputeRunningProcesses_v3=3,nvmlDeviceGetMPSComputeRunningProcesses_v3=3
run A "$WORK" farm --work 1.5 ::: $(seq 12)
unset FAKENVML_FAIL
is "$rc" 0 "blind: the farm succeeds"
fp=$(( $(jqd .auto.footprint) >> 20 ))
between "$fp" 100 700
ok $? "and learns a task's footprint from the device's memory, up to 700 MiB ($fp MiB)"

# --- bounds --------------------------------------------------------------------------------------
device curve=1:1,64:64 sm=1:0.01,64:1 start_ms=50 task_mib=700 dev_mib=81920
run A -j auto:100 "$WORK" farm --work 0.05 ::: 1 2
is "$(jqd .auto.max)" 48 "-j auto:100 under mps: never more than 48 clients"
is "$(jqd .slots_limited_by)" mps-clients "bounded by the MPS client limit"
run A -j auto:6 "$WORK" farm --work 0.05 ::: $(seq 40)
is "$(jqd .auto.max)" 6 "-j auto:6 caps the count"
m=$(limits)
[ "$m" -le 6 ]
ok $? "and the controller stays under it (at most $m)"
run A --mem 2G "$WORK" farm --work 0.05 ::: 1 2
is "$(jqd .auto.max)" 30 "--mem 2G: (80 GiB - the server's 66 MiB) / (2 GiB + 600 MiB context) = 30 at most"
is "$(jqd .slots_limited_by)" --mem "bounded by --mem"
device curve=1:1,64:64 sm=1:0.01,64:1 start_ms=50 task_mib=100 dev_mib=2500
run A "$WORK" farm --work 0.05 ::: 1 2
is "$(jqd .auto.max)" 4 "2500 MiB free: (2500 - 66) / 600 MiB of context = 4 at most"
is "$(jqd .slots_limited_by)" memory "bounded by free memory"
out=$($G run --share mps --total 5 --json true ::: $(seq 10))
is "$(printf '%s\n' "$out" | tail -n 1 | jq -r '[.devices[].auto.max] | add')" 5 "--total 5 over two GPUs: 5 at most in all"

# --- remembered counts ------------------------------------------------------------------------
device curve=1:1,6:6 sm=1:0.17,6:1 start_ms=100 task_mib=700 dev_mib=40000
rm -rf "$GPUPACK_STATE_DIR/auto"
run A "$WORK" farm --work 0.3 ::: $(seq 24)
first=$(jqd .auto.settled)
run A "$WORK" farm --work 0.3 ::: $(seq 24)
is "$(jqd .auto.start)" "$first" "a second run of the command starts from the count the first settled on"
is "$(jqd '.auto.decisions[0].why')" "remembered from an earlier run" "and says so"
run A "$WORK" farm --work 0.3 --other ::: 1
is "$(jqd .auto.start)" 4 "another command starts from the default"
f="$GPUPACK_STATE_DIR/auto/$(ls "$GPUPACK_STATE_DIR/auto" | head -n 1)"
printf 'garbage\n' >"$f"
run A "$WORK" farm --work 0.3 ::: 1 2
is "$rc" 0 "a corrupt remembered count does not fail the run"
is "$(printf '%s\n' "$err" | grep -c 'ignoring the remembered count')" 1 "one warning line"
printf 'gpupack-auto 1 %s 7\n' "$(basename "$f")" >"$f"
touch -d '40 days ago' "$f"
run A "$WORK" farm --work 0.3 ::: 1 2
like "$err" "older than 30 days" "a stale remembered count is ignored, with a warning"
is "$(jqd .auto.start)" 4 "and the run starts from the default"
if [ "$(id -u)" = 0 ]; then
	printf 'gpupack-auto 1 %s 7\n' "$(basename "$f")" >"$f"
	chown 65534 "$f"
	run A "$WORK" farm --work 0.3 ::: 1 2
	like "$err" "not by you" "a remembered count of another user is ignored, with a warning"
	is "$rc" 0 "and the run succeeds"
else
	ok 0 "# SKIP foreign-owned file needs root to make"
	ok 0 "# SKIP foreign-owned file needs root to make"
fi
rm -f "$f"
ln -s /etc/passwd "$f"
run A "$WORK" farm --work 0.3 ::: 1 2
like "$err" "ignoring the remembered count" "a symlink in place of a remembered count is ignored"
is "$rc" 0 "and the run succeeds"

# --- -j and its errors ----------------------------------------------------------------------
for bad in auto:0 auto:x auto: auto:1025 autox 0x 2.5; do
	run $G run -j "$bad" true ::: 1
	is "$rc" 255 "-j $bad is refused"
	one_line "$err" "-j $bad: one line"
done
run $G run --share exclusive -j auto true ::: 1
is "$rc" 255 "-j auto with --share exclusive is refused"
like "$err" "exclusive" "and says why"
out=$($G run --share exclusive --json true ::: 1 2)
is "$(printf '%s\n' "$out" | tail -n 1 | jq -r '.devices[0].jobs')" null "exclusive is not auto by default"
out=$($G run -j 3 --json true ::: 1 2)
is "$(printf '%s\n' "$out" | tail -n 1 | jq -r '.devices[0].auto')" null "-j N fixes the count"
