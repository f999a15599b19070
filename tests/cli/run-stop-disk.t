#!/bin/sh
# run-stop-disk.t: output is part of a task. A task whose --results files or
# whose output (in order under -k) could not be written is not recorded; a
# full disk or a file-size limit stops new starts with one line that says
# how to go on (exit 255), never a silent death, and --resume then runs
# every task whose output was lost, once.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

R() { $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }
SHIM="$GPUPACK_BUILD/tests/preload/full-disk.so"
# an ASan build must accept a library loaded before its runtime
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
cd "$T" || exit 1

seqs() { awk -F'\t' 'NR > 1 { print $1 }' "$1" | sort -n | tr '\n' ' '; }
# results: the inputs whose stdout file holds what the task printed
results() { for i in "$@"; do [ "$(cat "res/1/$i/stdout" 2>/dev/null)" = "out-$i" ] && printf '%s ' "$i"; done; }

# ---- --results on a full disk: the output is lost, so the task is not done ----------------------
# (the task ignores its own write errors and exits 0, as most programs do)
rm -rf res jl*
FULLDISK_UNDER="$T/res" FULLDISK_AT=4 LD_PRELOAD="$SHIM" \
	R -j 1 --joblog jl --results res --shell 'echo out-{} || true' ::: 1 2 3 >out 2>errf
is "$?" 255 "--results on a full disk: exit 255"
like "$(cat errf)" "^gpupack: run: --results res: No space left on device: no new task starts; .*run again with --resume when there is room$" \
	"one line: what failed, and how to go on"
is "$(wc -l <errf | tr -d ' ')" 1 "one line only"
is "$(seqs jl)" "" "the task whose output was lost has no record"
R -j 1 --joblog jl --resume --results res --shell 'echo out-{} || true' ::: 1 2 3 >out 2>errf
is "$?" 0 "--resume when there is room: exit 0"
is "$(seqs jl)" "1 2 3 " "every task recorded once"
is "$(results 1 2 3)" "1 2 3 " "and every --results file holds its task's output"

# ---- after output was lost the farm stops as after a first signal: a signal then ends the rest ---
# (task 1 waits for task 2 to start, prints, and its --results FILE record cannot be written;
# task 2 waits for ./go, which the test writes only after its checks)
rm -f jl* started go r.csv
FULLDISK_FILE="$T/r.csv" FULLDISK_AT=10 LD_PRELOAD="$SHIM" \
	$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 2 --joblog jl --results r.csv --shell 'if [ {} = 1 ]; then while [ ! -e started ]; do sleep 0.01;
	done; echo out-1; else touch started; i=0; while [ ! -e go ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i + 1));
	done; fi' ::: 1 2 >out 2>errf &
gp=$!
# a failure that ends the test here (TAP_BAIL) leaves no farm behind (lib.sh runs CLEANUP at exit)
# shellcheck disable=SC2034
CLEANUP="kill -KILL $gp 2>/dev/null"
i=0
while ! grep -q 'No space left' errf && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
kill -TERM $gp
i=0
while ! grep -q 'TERM: ending 1 running task' errf && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
like "$(cat errf)" "TERM: ending 1 running task" "output lost, then TERM: the running task is ended at once"
touch go
wait $gp
is "$?:$(seqs jl)" "255:" "exit 255, neither task recorded"
# shellcheck disable=SC2034
CLEANUP=

# ---- an end whose output was lost is not counted: --halt does not see it ------------------------
# (--halt now,fail=1: the failure was not recorded, so it halts nothing; the output lost says so)
rm -f jl* r.csv
FULLDISK_FILE="$T/r.csv" FULLDISK_AT=10 LD_PRELOAD="$SHIM" \
	R -j 1 --halt now,fail=1 --joblog jl --results r.csv --shell 'echo out-{}; exit 1' ::: 1 >out 2>errf
is "$?:$(seqs jl)" "255:" "a failure whose output was lost: exit 255, no record"
is "$(wc -l <errf | tr -d ' ')" 1 "one line, the lost output's: --halt did not count it"

# ---- a joblog that cannot be written ends the running tasks: unrecorded, their output dropped ----
# (task 1 prints and waits; task 2 waits for it to start, then ends: its record finds the disk full)
rm -f jl* started
: >jl
hdr=$(printf 'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n' | wc -c)
FULLDISK_FILE="$T/jl" FULLDISK_AT=$hdr LD_PRELOAD="$SHIM" \
	R -j 2 --joblog jl --shell 'if [ {} = 1 ]; then echo out-1; touch started; exec sleep 30; fi
	while [ ! -e started ]; do sleep 0.01; done; echo out-2' ::: 1 2 >out 2>errf
is "$?:$(seqs jl)" "255:" "the joblog full at the first record: exit 255, no record"
is "$(cat out)" "out-2" "the task it ended is not recorded and its output not shown (as --halt now)"

# ---- ordered output (-k) that cannot be written: those tasks are not recorded -------------------------
rm -f jl* out
: >out
FULLDISK_FILE="$T/out" FULLDISK_AT=6 LD_PRELOAD="$SHIM" \
	R -j 2 -k --joblog jl --shell 'echo {}{}' ::: 1 2 3 4 5 6 >>out 2>errf
is "$?" 255 "-k output to a full disk: exit 255"
like "$(cat errf)" "^gpupack: run: output: No space left on device: no new task starts; .*--resume" \
	"one line says so and how to go on"
n=$(seqs jl | wc -w)
ok $((!(n >= 2 && n < 6))) "the tasks printed before the disk filled are recorded ($n), the others not"
R -j 2 -k --joblog jl --resume --shell 'echo {}{}' ::: 1 2 3 4 5 6 >>out 2>errf
is "$?" 0 "--resume completes"
is "$(seqs jl)" "1 2 3 4 5 6 " "every task once in the joblog"
is "$(tr '\n' ' ' <out)" "11 22 33 44 55 66 " "and every task's output once, in order"

# ---- a file-size limit (ulimit -f): EFBIG in one line, not a death by SIGXFSZ -------------------------
rm -rf res jl*
(ulimit -f 2 && R -j 2 --joblog jl echo ::: $(seq 80)) >/dev/null 2>errf
is "$?" 255 "the joblog past ulimit -f: exit 255, not killed by SIGXFSZ"
like "$(cat errf)" "^gpupack: run: --joblog 'jl': cannot write task [0-9]+'s record: File too large; --resume runs" \
	"one line: File too large, and how to go on"
is "$(wc -l <errf | tr -d ' ')" 1 "one line only"
is "$(tail -c 1 jl | od -An -c | tr -d ' ')" '\n' "the joblog ends on a whole record"
R -j 2 --joblog jl --resume echo ::: $(seq 80) >/dev/null 2>&1
is "$?" 0 "--resume then completes"
is "$(awk -F'\t' 'NR > 1 { print $1 }' jl | sort -n | uniq -c | awk '$1 != 1' | wc -l | tr -d ' '):$(($(wc -l <jl) - 1))" "0:80" \
	"every task exactly once"

rm -rf res jl*
(ulimit -f 1 && R -j 1 --joblog jl --results res --shell 'seq 1000; : {}' ::: a) >/dev/null 2>errf
is "$?" 255 "--results past ulimit -f: exit 255"
like "$(cat errf)" "^gpupack: run: --results res: File too large: no new task starts" "one line says so"
is "$(seqs jl)" "" "and the task is not recorded"

# output larger than memory holds goes to $TMPDIR: no room there is the same lost output
rm -rf jl* tmp && mkdir tmp
TMPDIR="$T/tmp" FULLDISK_UNDER="$T/tmp" FULLDISK_AT=1000 LD_PRELOAD="$SHIM" \
	R -j 1 --joblog jl --shell 'head -c 3000000 /dev/zero; : {}' ::: a b >/dev/null 2>errf
is "$?:$(wc -l <errf | tr -d ' ')" "255:1" "no room in \$TMPDIR for a large output: exit 255, one line"
like "$(cat errf)" "^gpupack: run: temporary file for task output in $T/tmp: No space left on device: no new task starts" \
	"it says so"
is "$(seqs jl)" "" "the task is not recorded"

# ---- --results DIR alone is the record --resume reads: a stopped task must not look done ----------
# (no joblog: parallel's --resume skips a task whose --results files are there; a task the stop
# killed, or whose output was lost, leaves no stdout file, so --resume runs it again)
rm -rf res
$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 2 --results res \
	--shell 'echo out-{}; [ {} -le 2 ] || exec sleep 30' ::: 1 2 3 4 >/dev/null 2>errf &
gp=$!
i=0
while [ "$(ls -d res/1/* 2>/dev/null | wc -l)" -lt 4 ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
kill -TERM $gp
i=0
while ! grep -q 'no new tasks' errf && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
kill -TERM $gp
wait $gp
is "$?" 255 "TERM twice to gpupack with --results alone: it ends the running tasks, exit 255"
! [ -e res/1/3/stdout ] && ! [ -e res/1/4/stdout ]
ok $? "the stopped tasks leave no stdout file"
R -j 2 --results res --resume --shell 'echo out-{}; echo {} >>ran' ::: 1 2 3 4 >out 2>errf
is "$?" 0 "--resume --results DIR: exit 0"
is "$(results 1 2 3 4)" "1 2 3 4 " "every task's output is there"
is "$(sort ran | tr '\n' ' ')" "3 4 " "and only the stopped ones ran again"
