#!/bin/sh
# run-trace.t: GPUPACK_TRACE=FILE, the farm's lifecycle line by line (an
# attempt's start, the facts its end was decided from and the verdict):
# what a person reads to learn why a task ran again or was recorded. A
# trace that cannot be written refuses the run before anything changes.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

cd "$T" || exit 1
R() { $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }

# a task that fails twice then succeeds (--retries 3), one that succeeds
cat >flaky.sh <<'SH'
echo "$1" >>runs
[ "$1" = b ] || exit 0
[ "$(grep -cx b runs)" -ge 3 ] && exit 0
exit 7
SH
GPUPACK_TRACE=t1 run R -j 2 --retries 3 --joblog jl sh flaky.sh ::: a b
is "$rc" 0 "a traced farm runs as any"
is "$(grep -c ' start seq=2 ' t1)" 3 "each attempt's start is a line"
is "$(grep -c ' end seq=2 .* exit:7 .* -> retry$' t1)" 2 "a failed attempt: its exit and the verdict retry"
is "$(grep -c ' end seq=2 .* exit:0 .* -> record$' t1)" 1 "the last: record"
is "$(grep -c ' end seq=1 .* -> record$' t1)" 1 "the other task: record, once"
like "$(grep ' end seq=2 ' t1 | head -n 1)" '^ *[0-9]+\.[0-9]{3} end seq=2 pid=[0-9]+ gpu=0 exit:7 ran=[0-9.]+ ' \
	"a line starts with the seconds since the farm began, then what ended where and how"
is "$(awk '{ print $1 }' t1 | sort -n -c 2>&1 && echo sorted)" sorted "lines in time order"

# appended, never truncated: two farms, one file
GPUPACK_TRACE=t1 run R -j 2 sh -c 'exit 0' ::: x
is "$(grep -c ' start seq=' t1)" 5 "a second farm's lines are appended"

# no variable, no file
mkdir quiet && cd quiet || exit 1
run R -j 2 sh ../flaky.sh ::: a
is "$(ls)" runs "without GPUPACK_TRACE nothing is written"
cd .. || exit 1

# refused before anything changes: a path that cannot be opened, a symlink
GPUPACK_TRACE=nodir/t run R --joblog jl2 true ::: 1
is "$rc" 255 "an unwritable GPUPACK_TRACE: exit 255"
one_line "$err" "one line"
like "$err" "GPUPACK_TRACE: cannot open nodir/t: No such file" "it names the variable, the path and why"
ok "$([ ! -e jl2 ] && echo 0 || echo 1)" "no joblog written"
ln -s t1 link
before=$(wc -c <t1)
GPUPACK_TRACE=link run R --joblog jl3 true ::: 1
is "$rc" 255 "a GPUPACK_TRACE that is a symlink: refused"
is "$(wc -c <t1)" "$before" "the file it points to is untouched"
ok "$([ ! -e jl3 ] && echo 0 || echo 1)" "no joblog written"

# a driver slow to answer (on an H200 gpupack's own reading waited 60 s in the driver beside an
# MPS fault): each device reading that took more than 0.25 s is a line, -j auto's and the usage
# sampler's; none when the driver answers at once
rm -rf dev && mkdir -p dev/proc
printf '%s\n' curve=1:1,8:8 sm=1:0.1,8:1 start_ms=100 start_cpu=1 gpu_cpu=0 ncpu=16 task_mib=2000 \
	dev_mib=80000 >dev/config
F() {
	FAKENVML_DEVICE="$T/dev" FAKE_DEVICE="$T/dev" GPUPACK_PROC_DIR="$T/dev/proc" \
		GPUPACK_NVML_LIB="$GPUPACK_BUILD/tests/fakenvml/libnvidia-ml.so.1" \
		$GPUPACK run --share timeslice --json "$TOOLS/fake-work" farm --work 1 ::: 1 2 3
}
GPUPACK_TRACE=t2 FAKENVML_SLOW=nvmlDeviceGetComputeRunningProcesses_v3=300 run F
is "$rc" 0 "a slow driver: the farm runs"
ok "$(grep -q ' auto read gpu=0 took [0-9.]* s$' t2; echo $?)" "-j auto's slow reading is a line"
ok "$(grep -q ' usage read gpu=0 took [0-9.]* s$' t2; echo $?)" "the usage sampler's slow reading is a line"
# every reading of the slow driver is a line; of a quick one none, but on a machine loaded enough to
# hold a process 0.25 s: fewer, whatever the load
GPUPACK_TRACE=t3 run F
slow=$(grep -c ' read gpu=' t2) quick=$(grep -c ' read gpu=' t3)
[ "$quick" -lt "$slow" ]
ok $? "a driver that answers at once: not every reading is a line ($quick against $slow)"
