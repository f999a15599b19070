#!/bin/sh
# shellcheck disable=SC2016 # the tasks' own $VARS are literal
# run-torn.t: the joblog when the disk fills up or a write is torn. A record
# is written whole or cut back, a torn tail is cut before anything is
# appended (a torn "1" must not turn task 10 into Seq 110), a write error
# stops the run with one line, and --resume then finishes every task once.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

R() { $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }
SHIM="$GPUPACK_BUILD/tests/preload/full-disk.so"
# an ASan build must accept a library loaded before its runtime
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
cd "$T" || exit 1

seqs() { awk -F'\t' 'NR > 1 { print $1 }' "$1" | sort -n | tr '\n' ' '; }

# --- a torn tail is cut before --resume appends ------------------------------------------
run R --joblog jl -j 1 echo ::: a b c
printf '1' >>jl
run R --joblog jl --resume -k echo ::: a b c d e f g h i j k l
is "$rc" 0 "--resume after a torn tail runs"
is "$(seqs jl)" "1 2 3 4 5 6 7 8 9 10 11 12 " "the torn '1' did not merge with a record (no Seq 110)"
like "$err" "torn last record" "and it says it cut a torn record"
is "$(printf '%s\n' "$err" | wc -l)" 1 "in one line"
is "$(grep -c . jl)" 13 "header and twelve whole records"

# the same for +FILE (append without resume), and a torn header
printf 'Seq\tHo' >jl2
run R --joblog +jl2 echo ::: x
is "$(head -n 1 jl2 | cut -f 1,2)" "$(printf '1\t:')" \
	"+FILE after a torn header: the torn part cut (and, as parallel's +FILE, no header written)"
is "$(cut -f 1 jl2 | tr "\n" " ")" "1 " "and one record"

# a torn record in the middle is no record: its task runs again on --resume
rm -f jl*
run R --joblog jl -j 1 echo ::: a b c
head -c -12 jl >jl.cut && mv jl.cut jl && printf '\n' >>jl
run R --joblog jl --resume echo ::: a b c
is "$(seqs jl)" "1 2 3 3 " "a record torn before its newline is run again, the whole ones not"

# --- a full disk: short write, then ENOSPC ----------------------------------------------
rm -f jl*
: >jl
hdr=$(printf 'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n' | wc -c)
t0=$(date +%s)
FULLDISK_FILE="$T/jl" FULLDISK_AT=$((hdr + 120)) LD_PRELOAD="$SHIM" \
	R -j 1 --joblog jl echo ::: 1 2 3 4 5 6 7 8 9 >out 2>errf
rc=$?
t1=$(date +%s)
is "$rc" 255 "a joblog that cannot be written stops the run (exit 255)"
like "$(cat errf)" "^gpupack: run: --joblog '[^']*jl': cannot write task [0-9]+'s record: No space left on device; --resume runs it and the rest when there is room$" \
	"with one line that says so"
is "$(wc -l <errf)" 1 "one line only"
ok $((t1 - t0 > 5)) "at once, not after the other tasks"
is "$(tail -c 1 jl | od -An -c | tr -d ' ')" '\n' "the joblog ends on a whole record: the short write was cut back"
nrec=$(seqs jl | wc -w)
ok $((!(nrec >= 1 && nrec < 9))) "some records were written ($nrec)"
run R --joblog jl --resume -k echo ::: 1 2 3 4 5 6 7 8 9
is "$rc" 0 "--resume then completes"
is "$(seqs jl)" "1 2 3 4 5 6 7 8 9 " "every task ends exactly once in the joblog"

# the header itself cannot be written: one line, nothing run
rm -f jl* ran
: >jl
FULLDISK_FILE="$T/jl" FULLDISK_AT=10 LD_PRELOAD="$SHIM" \
	R --joblog jl --shell 'echo {} >>ran' ::: 1 2 >out 2>errf
rc=$?
is "$rc" 255 "a joblog whose header cannot be written: exit 255"
one_line "$(cat errf)" "one line"
ok "$([ ! -e ran ]; echo $?)" "and no task ran"
is "$(wc -c <jl | tr -d ' ')" 0 "nor is a torn header left"
