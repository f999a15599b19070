#!/bin/sh
# shellcheck disable=SC1083,SC2016,SC2013 # replacement strings and the tasks' own $VARS are literal on purpose
# run.t: `gpupack run` with CPU tasks on a simulated H100: inputs, command
# lines (GNU parallel's: a shell line, values quoted; -q an argv), output
# capture, environment, retries, halt, timeouts, results, JSON summary,
# exit codes and usage errors. tests/cli/parallel-diff.t compares with GNU
# parallel itself, case by case.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

# GPUPACK may hold a wrapper and the binary: split it on purpose
gp() {
	# shellcheck disable=SC2086
	$GPUPACK "$@"
}
# alive PID: running (a zombie waiting for a reaper counts as gone)
alive() {
	st=$(ps -o stat= -p "$1" 2>/dev/null)
	[ -n "$st" ] && [ "${st#Z}" = "$st" ]
}
R() { gp --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }
UUID=GPU-0935e153-333f-178e-fcc2-6348e796093e
cd "$T" || exit 1

# --- without a device -------------------------------------------------------
if ! command -v nvidia-smi >/dev/null 2>&1; then
	run gp run true ::: 1
	is "$rc" 255 "no driver and no --sim: exit 255"
	one_line "$err" "no driver: one line"
fi

# --- inputs -------------------------------------------------------------------
run R -k echo ::: a b ::: 1 2
is "$out" "$(printf 'a 1\na 2\nb 1\nb 2')" "::: sources: cross product, first varies slowest"
printf 'x\ny\n' >in.txt
run R -k echo :::: in.txt
is "$out" "$(printf 'x\ny')" ":::: FILE"
run R -k -a in.txt echo ::: 1 2
is "$out" "$(printf 'x 1\nx 2\ny 1\ny 2')" "-a FILE combined with :::"
out=$(printf 'p\nq\n' | R -k echo got)
is "$out" "$(printf 'got p\ngot q')" "stdin lines without ::: (input appended)"
run R -k echo '[{1}]' '[{2}]' ::: a :::
is "$out" "[a] []" "an empty source is one empty value (as in parallel)"
is "$rc" 0 "and exit 0"
run R -k echo ::: :::
is "$out" "" "every source empty: no tasks"

# --- command lines: a shell line with every value quoted; -q an argv -----------------------
mkdir x
run R -k printf "'<%s>\n'" ::: '; rm -rf x' '$(rm -rf x)' '`rm -rf x`' "x' ; rm -rf 'x"
is "$out" "$(printf '<%s>\n' '; rm -rf x' '$(rm -rf x)' '`rm -rf x`' "x' ; rm -rf 'x")" \
	"an input like '; rm -rf x' stays one argument"
ok "$([ -d x ]; echo $?)" "and nothing was removed"
run R -q printf '<%s>' '{}' '$HOME' ::: 'a b'
is "$out" '<a b><$HOME>' "-q: the words as they are, no word splitting, no expansion"
run R 'echo {} | tr a b' ::: "aaa" "it's a"
like "$out" "^bbb" "a quoted command line is shell syntax"
like "$out" "it's b" "with the input quoted"
run R --shell 'echo {} | tr a b' ::: "aaa"
is "$out" "bbb" "--shell is accepted"
run R echo {} '>' {}.out ::: y
ok "$([ -f y.out ] && [ "$(cat y.out)" = y ]; echo $?)" "'>' as a word redirects, as in parallel"
run R no-such-command-gpupack ::: 1
is "$rc" 1 "a missing command fails its task"
like "$err" "no-such-command-gpupack" "and says which"

# --- output ------------------------------------------------------------------------
run R -j 4 --shell 'for i in 1 2 3 4 5 6; do echo {}-$i; sleep 0.02; done' ::: a b c d
grouped=$(printf '%s\n' "$out" | awk -F- '
	{ if ($1 != cur) { if (seen[$1]++) bad = 1; cur = $1; n = 0 } n++ }
	END { print bad ? "interleaved" : "grouped" }')
is "$grouped" grouped "each task's output printed whole, never interleaved"
is "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 24 "every line"
n=$(R -j 2 --shell ': {}; head -c 3000000 /dev/zero | tr "\0" a' ::: 1 2 | wc -c | tr -d ' ')
is "$n" 6000000 "large outputs (3 MB each) neither deadlock nor get lost"
run R --shell 'echo out{}; echo err{} >&2' ::: 1
is "$out" "out1" "stdout to stdout"
is "$err" "err1" "stderr to stderr"
run R -k -j 3 --shell 'sleep 0.{}; echo {}' ::: 3 2 1
is "$out" "$(printf '3\n2\n1')" "-k: input order"
# (each ends a second after the one before it has said it is done: an order no busy machine turns)
run R -j 3 --shell 'if [ {} -gt 1 ]; then while [ ! -e done$(({} - 1)) ]; do sleep 0.02; done; sleep 1; fi; echo {}; touch done{}' ::: 3 2 1
is "$out" "$(printf '1\n2\n3')" "without -k: completion order"

# --- environment -----------------------------------------------------------------------
export FROM_PARENT=kept CUDA_MPS_PIPE_DIRECTORY=/nonexistent
run R -j 1 -q --env FOO=bar --env FROM_PARENT=over sh -c \
	'echo "$CUDA_VISIBLE_DEVICES $GPUPACK_SEQ $GPUPACK_SLOT $GPUPACK_GPU $FOO $FROM_PARENT ${CUDA_MPS_PIPE_DIRECTORY:-unset}"' ::: 1
is "$out" "$UUID 1 1 $UUID bar over unset" "task environment: device, seq, slot, --env; no MPS pipe outside mps"
run R -j 1 'echo $FROM_PARENT; : {}' ::: 1
is "$out" "kept" "the rest is inherited"
unset FROM_PARENT CUDA_MPS_PIPE_DIRECTORY
run R -k -j 1 echo {gpu} {slot} {%} {#} ::: a b
is "$out" "$(printf '%s 1 1 1\n%s 1 1 2' "$UUID" "$UUID")" "{gpu} {slot} {%} {#}"

# --- exit status -----------------------------------------------------------------------
run R --shell 'exit {}' ::: 0 0 0
is "$rc" 0 "all succeeded: 0"
run R --shell 'exit {}' ::: 0 3 5 7
is "$rc" 3 "three failed: 3"
run sh -c "seq 102 | $GPUPACK --sim '$TOPO/h100-80gb.topo' run --share timeslice -j 8 false"
is "$rc" 101 "more than 100 failed: 101"

# --- retries -------------------------------------------------------------------------
run R --retries 2 --shell 'if [ -e m{} ]; then echo second; else touch m{}; echo first; exit 1; fi' ::: a
is "$rc" 0 "--retries 2: a task that fails once succeeds (2 tries in all, as parallel)"
is "$out" "second" "only the final attempt's output is printed"
rm -f m*
run R --retries 3 --joblog jl --shell 'echo x >>count; exit 1' ::: a
is "$rc" 1 "still failing after its retries: failed"
is "$(wc -l <count | tr -d ' ')" 3 "--retries 3: 3 tries in all"
is "$(grep -c '^1	' jl)" 1 "one joblog record for the task"

# --- halt -----------------------------------------------------------------------------
run R -j 1 --joblog jl --halt now,fail=1 --shell 'exit {}' ::: 0 4 0 0
is "$rc" 4 "--halt now,fail=1: exit status of the failing task"
is "$(grep -c '^[0-9]' jl)" 2 "no task after the failure"
run R -j 2 --halt soon,fail=1 --shell 'sleep 0.{}; echo {}; exit {}' ::: 1 6 2 3
is "$rc" 1 "--halt soon,fail=1"
like "$out" "6" "soon: the running task finished"
run R -j 1 --halt now,fail=50% --shell 'exit {}' ::: 0 1 1 1 0 0
is "$rc" 50 "--halt now,fail=50%: half of all tasks failed; the status is that percentage"
run R -j 1 --halt now,fail=50% --shell 'exit {}' ::: 0 1 1 0 0 0
is "$rc" 34 "never reached: the percentage failed (of those started), as parallel"
run R -j 1 --joblog jl --halt now,success=2 --shell 'exit {}' ::: 1 0 0 0
is "$rc" 0 "--halt now,success=2"
is "$(grep -c '^[0-9]' jl)" 3 "stopped after two successes"

# --- --delay: the loop wakes for the next start, also with no task running ------------------
# (timeout: a loop that did not wake would wait for ever; the run itself takes 0.2 s)
# shellcheck disable=SC2086
run timeout 60 $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 1 --delay 0.1 -k echo ::: a b c
is "$rc:$out" "0:$(printf 'a\nb\nc')" "--delay 0.1 -j 1: each next task starts once its delay is over"

# --- timeout ------------------------------------------------------------------------
run R --joblog jl --timeout 0.3 --shell 'sleep 30 & echo $! >pid{}; wait' ::: a
is "$rc" 1 "--timeout: the task fails"
awk -F'\t' 'NR == 2 { exit !($7 == -1 && $8 == 15) }' jl
ok $? "joblog: exit -1, signal 15 (SIGTERM)"
i=0
while alive "$(cat pida)" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
alive "$(cat pida)"
ok $((! $?)) "the task's background child went with its process group"
run R --timeout 5 --retries 1 true ::: a
is "$rc" 0 "a task within its timeout succeeds"

# --- results ------------------------------------------------------------------------
run R --results res --shell 'echo out{}; echo err{} >&2; exit {}' ::: 0 1
is "$out" "" "--results: nothing printed"
is "$(cat res/1/0/stdout)$(cat res/1/1/stderr)$(cat res/1/1/seq)" "out0err12" \
	"DIR/1/<value>/stdout, stderr and seq (GNU parallel's layout)"
is "$rc" 1 "with the exit status of the tasks"

# --- summary -------------------------------------------------------------------------
run R --json -j 2 --shell 'echo task; exit {}' ::: 0 0 1
json=$out
is "$(printf '%s' "$json" | jq -r '[.tasks, .done, .failed, .exit_status, .devices[0].uuid, .devices[0].slots] | @tsv')" \
	"$(printf '3\t2\t1\t1\t%s\t2' "$UUID")" "--json: one object, alone on stdout"
is "$(printf '%s\n' "$err" | grep -c '^task$')" 3 "the tasks' stdout on stderr"
is "$(R --json -u -k 'echo u{}' ::: 1 2 2>/dev/null | jq -r .tasks)" 2 "--json -u: the tasks' stdout on stderr too"
printf '%s' "$json" | jq -e '.devices[0].busy_share > 0 and .devices[0].busy_share <= 1 and .makespan_s > 0' >/dev/null
ok $? "busy share and makespan"
run R --summary true ::: 1 2
like "$err" "^gpupack: run: 2 tasks, 0 failed" "--summary: a line on stderr"
run R --bar true ::: 1 2
is "$(printf '%s' "$err" | tr -d '\r\033' )" "$err" "--bar into a file or pipe: no carriage returns or escapes"
like "$err" "^gpupack: run: 2 tasks, 0 failed" "only the summary"
run R --summary true ::: 1
like "$err" "^gpupack: run: 1 task, 0 failed" "1 task, not 1 tasks"
if command -v script >/dev/null 2>&1; then
	out=$(script -qec "$GPUPACK --sim '$TOPO/h100-80gb.topo' run --share timeslice --bar 'sleep 0.6; : {}' ::: 1 2" /dev/null)
	like "$out" "100% 2:0=0s" "--bar draws on a terminal"
	# the input of the task started last, from the first slot too (-j 1 has no other)
	out=$(script -qec "$GPUPACK --sim '$TOPO/h100-80gb.topo' run --share timeslice -j 1 --bar true ::: the-input" \
		/dev/null)
	like "$out" "\\[0:1/1\\] the-input" "--bar -j 1: the running task's input"
else
	ok 0 "# skip script(1) is not installed"
	ok 0 "# skip"
fi

# --- usage: bad input changes nothing ---------------------------------------------------
printf 'keep\n' >kept.log
for args in "--share none true" "--sm 50 true" "-j x true" "--halt sometimes true" "--bogus true" \
	"--timeout -1 true" "--mem 10 true" "--env 1X=2 true" "--share exclusive -j 2 true" \
	"--retries 0 true" "--bin 1 true" "-S host true" "echo {=s/(/b/=}" "--delay -1 true" \
	"--rpl x true"; do
	# shellcheck disable=SC2086
	run R --joblog kept.log $args ::: 1
	is "$rc" 255 "usage error: '$args'"
	one_line "$err" "one line: '$args'"
done
is "$(cat kept.log)" "keep" "the joblog is untouched by usage errors"
run R --mem 100G true ::: 1
is "$rc" 255 "--mem larger than any device: 255"
like "$err" "room" "and says why"
like "$err" "--mem 100 GiB plus 600 MiB of context per task, largest free memory 79.6 GiB\$" \
	"with the device's free memory (not the context's size printed twice)"
run R --mem 85GB true ::: 1
like "$err" "--mem 79.2 GiB plus" "--mem 85GB is 85 * 10^9 bytes (KB MB GB TB are powers of 1000)"

# --- scale: inputs stream, memory stays flat ------------------------------------------------
# (not under make valgrind: a million inputs through valgrind take long and prove nothing more)
if [ -n "${GPUPACK_VALGRIND:-}" ]; then
	ok 0 "# skip scale under valgrind"
else
# (ASan keeps freed memory in quarantine: bound it so RSS means the same in the sanitizer pass)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1:thread_local_quarantine_size_kb=64"
rss() { tail -n 1 | jq -r .max_rss_kib; }
# make check's sanitizer pass: 200,000 (10x, not 50x; the first pass streams the million)
many=1000000
[ "${GPUPACK_TEST_PASS:-}" = san ] && many=200000
small=$(seq 20000 | R --dry-run --json echo {} {.} 2>/dev/null | rss)
big=$(seq $many | R --dry-run --json echo {} {.} 2>/dev/null | rss)
# flat: at most a quarter more plus 1 MiB (allocator noise), where growth with the count would be 10-50x
ok $((big > small + small / 4 + 1024)) "$many inputs in the memory of 20,000 (max RSS $big KiB vs $small KiB)"
n=$(seq $many | R --dry-run -k echo {#} | tail -n 1)
is "$n" "echo $many" "all of them, in order"
small=$(seq 200 | R -j 8 --json true | rss)
big=$(seq 2000 | R -j 8 --json true | rss)
ok $((big > small + small / 4 + 1024)) "2,000 real tasks in the memory of 200 (max RSS $big KiB vs $small KiB)"
fi

# --- the real driver's library starts a thread (NVML did on the lent H200) --------------------
# A thread that does not block SIGCHLD takes it from the farm's signalfd: every finished task
# must still be reaped. The fake libnvidia-ml starts such a thread in nvmlInit, as the real one.
FAKE_NVML="$GPUPACK_BUILD/tests/fakenvml/libnvidia-ml.so.1"
if [ -f "$FAKE_NVML" ]; then
	GPUPACK_NVML_LIB=$FAKE_NVML timeout 30 $GPUPACK run --share timeslice -j 2 --json true ::: 1 2 3 4 5 6 \
		>"$T/nvml.out" 2>"$T/nvml.err"
	rc=$?
	is "$rc" 0 "a farm on the driver backend (a library thread in the process) reaps every task"
	is "$(tail -n 1 "$T/nvml.out" | jq -r .tasks)" 6 "all six ran"
else
	ok 0 "# skip the fake libnvidia-ml is not built"
	ok 0 "# skip"
fi
