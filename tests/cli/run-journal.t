#!/bin/sh
# shellcheck disable=SC2016,SC2013,SC2086 # the tasks' own $VARS are literal; pid and uuid lists split on purpose
# run-journal.t: the joblog in GNU parallel's columns, +FILE, --resume and
# --resume-failed, and the journal's promise: after kill -9 of gpupack,
# --resume runs every unfinished task once and no finished task again.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

gp() {
	# shellcheck disable=SC2086
	$GPUPACK "$@"
}
R() { gp --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }
alive() {
	st=$(ps -o stat= -p "$1" 2>/dev/null)
	[ -n "$st" ] && [ "${st#Z}" = "$st" ]
}
PROBE="$TOOLS/farm-probe"
cd "$T" || exit 1

# --- columns ----------------------------------------------------------------------
t0=$(date +%s)
run R -k --joblog jl --shell 'printf {}; exit {}' ::: 0 3
is "$(head -n 1 jl)" "$(printf 'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand')" \
	"header: GNU parallel's columns"
awk -F'\t' -v t0="$t0" 'NR > 1 {
	if (NF != 9 || $2 != ":" || $5 != 0 || $8 != 0) bad = 1
	if ($3 !~ /^[0-9]+\.[0-9][0-9][0-9]$/ || $3 + 0 < t0 - 1 || $3 + 0 > t0 + 60) bad = 1
	if ($4 !~ /^ *[0-9]+\.[0-9][0-9][0-9]$/ || length($4) < 10) bad = 1
} END { exit bad }' jl
ok $? "Host ':', Starttime epoch with 3 decimals, JobRuntime %10.3f, Send 0, Signal 0"
is "$(awk -F'\t' 'NR > 1 { print $1, $6, $7, $9 }' jl | sort)" "$(printf '1 1 0 printf 0; exit 0\n2 1 3 printf 3; exit 3')" \
	"Seq, Receive (bytes of output), Exitval, Command"
run R --joblog +jl echo ::: z
is "$(grep -c '^Seq' jl)" 1 "+FILE appends, without a second header"
is "$(grep -c '^[0-9]' jl)" 3 "and keeps the old records"
run R --joblog jl echo ::: z
is "$(grep -c '^[0-9]' jl)" 1 "FILE without + starts afresh"

# --- resume, resume-failed -----------------------------------------------------------------
rm -f jl*
run R --joblog jl --shell 'echo {} >>ran; exit $(({} % 2))' ::: 1 2 3 4
is "$rc" 2 "first run: two failed"
: >ran
run R --joblog jl --resume --shell 'echo {} >>ran; exit $(({} % 2))' ::: 1 2 3 4 5
is "$(sort ran | tr '\n' ' ')" "5 " "--resume runs only what has no record"
: >ran
run R --joblog jl --resume-failed --shell 'echo {} >>ran; exit 0' ::: 1 2 3 4 5
like "$err" "another command" "--resume with a changed command is refused"
is "$rc" 255 "exit 255"
is "$(cat ran)" "" "and nothing ran"
run R --joblog jl --resume-failed --shell 'echo {} >>ran; exit $(({} % 2))' ::: 1 2 3 4 5
is "$(sort ran | tr '\n' ' ')" "1 3 5 " "--resume-failed reruns the failed ones"

# --- --line-buffer: a task's stderr that cannot be written ------------------------------------
# /dev/full answers ENOSPC: the output is lost, so the task has no record and the run stops
rm -f jl*
R --line-buffer --joblog jl --shell 'echo err{} >&2' ::: a >/dev/null 2>/dev/full
is "$?" 255 "--line-buffer: stderr that cannot be written stops the run, exit 255"
is "$(grep -c '^[0-9]' jl)" 0 "and the task whose stderr was lost has no record (--resume runs it)"
# a closed stderr (EPIPE) is not that: as a closed stdout, the run goes on and records the task.
# The FIFO's one reader (fd 3) is closed before gpupack starts, so every write to it is EPIPE.
rm -f jl* fifo
mkfifo fifo
# shellcheck disable=SC2094 # one FIFO opened twice on purpose: the reader goes, the writer stays
exec 3<>fifo 4>fifo 3<&-
R --line-buffer --joblog jl --shell 'echo err{} >&2' ::: a >/dev/null 2>&4
is "$?" 0 "--line-buffer: a closed stderr is no error"
exec 4>&-
is "$(grep -c '^1	' jl)" 1 "and the task is recorded"

# --- kill -9, then --resume ---------------------------------------------------------------
rm -f jl* log
seq 24 >inputs
# not through gp(): $! must be gpupack itself
# shellcheck disable=SC2086
$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 4 --joblog jl -a inputs "$PROBE" log 300 0 \
	>/dev/null 2>&1 &
gpid=$!
# started and not ended (in the probes' log): the tasks in flight
inflight() { awk '$1 == "start" { s[$4] = 1 } $1 == "end" { delete s[$4] } END { n = 0; for (q in s) n++; print n }' log 2>/dev/null; }
# the kill comes with 6 records in the joblog and a task in flight (one is, unless the machine is
# so loaded that no slot refilled within 10 s)
i=0
while n=$(grep -c '^[0-9]' jl 2>/dev/null); { [ "${n:-0}" -lt 6 ] || [ "$(inflight)" -lt 1 ]; } && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
kill -9 "$gpid"
wait "$gpid" 2>/dev/null
cp log log1
# leaders die by PR_SET_PDEATHSIG: give the kernel a moment
i=0
while [ $i -lt 40 ]; do
	left=0
	for p in $(awk '$1 == "start" { print $6 }' log); do alive "$p" && left=$((left + 1)); done
	[ "$left" -eq 0 ] && break
	sleep 0.05
	i=$((i + 1))
done
done1=$(awk -F'\t' 'NR > 1 { print $1 }' jl | sort -n)
ndone1=$(printf '%s\n' "$done1" | grep -c .)
ok $((!(ndone1 < 24 && ndone1 >= 6))) "killed mid-run ($ndone1 of 24 ended)"
is "$left" 0 "no task outlives gpupack, even after kill -9"
run R -j 4 --joblog jl --resume -a inputs "$PROBE" log 300 0
is "$rc" 0 "--resume completes the run"
is "$(awk -F'\t' 'NR > 1 { print $1 }' jl | sort -n | uniq | tr '\n' ' ')" "$(seq 24 | tr '\n' ' ')" \
	"every task has an end record"
is "$(awk -F'\t' 'NR > 1 { print $1 }' jl | sort -n | uniq -d)" "" "exactly one each"
again=0
for s in $done1; do
	n=$(awk -v s="$s" '$1 == "start" && $4 == s' log | wc -l)
	[ "$n" -eq 1 ] || again=$((again + 1))
done
is "$again" 0 "no finished task ran again"
# started in the first run, not recorded: killed mid-run (or ended just before the kill, unrecorded)
killed=$(awk '$1 == "start" { print $4 }' log1 | sort -n | uniq | while read -r s; do
	printf '%s\n' "$done1" | grep -qx "$s" || echo "$s"
done)
ncut=$(printf '%s\n' "$killed" | grep -c .)
twice=$(awk '$1 == "start" { st[$4]++ } END { for (s in st) if (st[s] == 2) print s }' log | sort -n)
ok $((!(ncut >= 1 && ncut <= 4))) "tasks were in flight at the kill ($ncut, 1 to 4 slots)"
is "$twice" "$killed" "those ran again once each, and no other task ran twice"
