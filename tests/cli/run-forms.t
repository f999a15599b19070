#!/bin/sh
# shellcheck disable=SC2016 # the tasks' own $0 is literal on purpose
# run-forms.t: small forms of `gpupack run` whose result only shows in one
# place: the slots -j N% gives (--json), the input a "command line too long"
# error quotes, the shell picked from the process gpupack was started from.
# Each was found unchecked by make mutate (tests/mutate.sh).
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

gp() {
	# shellcheck disable=SC2086
	$GPUPACK "$@"
}
R() { gp --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }
cd "$T" || exit 1

# --- -j N%: of the share mode's default (timeslice: 2 per device), rounded up ---------------
slots() { R --json "$@" true ::: 1 2 3 4 5 6 7 8 9 10 2>/dev/null | tr ',' '\n' | sed -n 's/^"slots"://p'; }
is "$(slots -j 50%)" 1 "-j 50%: half of 2"
is "$(slots -j 150%)" 3 "-j 150%: 3"
is "$(slots -j 75%)" 2 "-j 75%: 1.5 rounded up"
is "$(slots -j 250%)" 5 "-j 250%: 5"
is "$(slots -j 101%)" 3 "-j 101%: 2.02 rounded up"
is "$(slots -j 1%)" 1 "-j 1%: at least 1"
is "$(slots -j +3)" 5 "-j +3: 2 + 3"
is "$(slots -j -1)" 1 "-j -1: 2 - 1"
is "$(slots -j 3)" 3 "-j 3"

# --- command line too long: the error quotes the input, cut after 50 characters -------------
a50=$(printf '%050d' 0)
run R -s 40 echo ::: "$a50"
is "$rc" 255 "a command line over -s: refused"
like "$err" "command line too long \(55 >= 40, GNU parallel's limit\) at input 1: ${a50}\$" \
	"an input of 50 characters is quoted whole"
run R -s 40 echo ::: "${a50}x"
like "$err" "at input 1: ${a50}\.\.\.\$" "one of 51 is cut to 50 and ..."

# --- the shell: with $PARALLEL_SHELL and $SHELL unset, the shell gpupack was started from ----
# (a login shell's "-sh": the binary itself says which shell it is)
BASH_EXE=$(readlink -f "$(command -v bash)")
export G="$GPUPACK" SIM="$TOPO/h100-80gb.topo"
# started_from SHELL: what a task's $0 is when gpupack runs under a login "-sh" that is SHELL
started_from() {
	env -u SHELL -u PARALLEL_SHELL bash -c 'exec -a -sh "$0" -c "\$G --sim \"\$SIM\" run --share timeslice echo \\\$0 ::: a; true"' "$1" 2>&1
}
is "$(started_from bash)" "$BASH_EXE a" "a login -sh that is bash: tasks run in bash"
if command -v dash >/dev/null 2>&1; then
	is "$(started_from dash)" "$(readlink -f "$(command -v dash)") a" "a login -sh that is dash: tasks run in dash"
fi
got=$(env -u SHELL -u PARALLEL_SHELL bash -c '$G --sim "$SIM" run --share timeslice echo \$0 ::: a; true' 2>&1)
is "$got" "$BASH_EXE a" "started from bash: tasks run in bash"

# --- -j auto: a first run, with nothing remembered, starts from the default count ------------
# (on every device: a second GPU of the same kind takes the first one's start, not a memory)
if command -v jq >/dev/null 2>&1; then
	got=$(gp --sim "$TOPO/h100-80gb-x8.topo" run --share timeslice --gpus 0,1 -j auto --json true ::: 1 2 3 2>/dev/null |
		jq -r '[.devices[].auto.decisions[0] | "\(.limit) \(.why)"] | join(", ")')
	is "$got" "2 start, 2 start" "-j auto, nothing remembered: each device's first decision is the start at 2"
	# each decision names its signals, known or null (a later one has read the CPUs)
	got=$(R -j auto --json sleep ::: 0.3 0.3 0.3 0.3 0.3 0.3 2>/dev/null |
		jq -r '[.devices[0].auto.decisions[] | has("rate") and has("gpu") and has("cpu")] | all')
	is "$got" true "-j auto --json: every decision has rate, gpu and cpu"
fi

# --- --header with CRLF lines: the header's \r is not part of the last column's name --------
printf 'xy\tz\r\n1\t2\r\n' >crlf.tsv
got=$(R -k --header : --colsep '\t' echo {xy}-{z} :::: crlf.tsv 2>&1 | tr -d '\r')
is "$got" "1-2" "a CRLF header names its last column without the \\r"

# --- output beyond memory with nowhere to spill it: said, not silently dropped ---------------
run env TMPDIR="$T/none" $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice 'yes | head -c 1500000; true' ::: 1
like "$err" "temporary file for task output in $T/none: No such file or directory" \
	"a task's output over 1 MiB with TMPDIR missing: the error names the directory"
is "$rc" 255 "output that could not be kept: exit 255 (stopped), the task is not recorded"
# --files with nowhere to put the file: the task is not counted done either (its record is not written)
run env TMPDIR="$T/none" $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice --files --json -j 1 true ::: 1
is "$rc" 255 "--files with TMPDIR missing: exit 255 (stopped)"
like "$out" '^\{"tasks":0,"done":0,"failed":0,' "and the task whose file was not written is not counted"

# --- a command found on PATH: the first executable file of that name, as the shell finds it --
mkdir -p "$T/pa" "$T/pb"
printf '#!/bin/sh\necho a "$@"\n' >"$T/pa/mytool"
printf '#!/bin/sh\necho b "$@"\n' >"$T/pb/mytool"
chmod 644 "$T/pa/mytool"
chmod 755 "$T/pb/mytool"
got=$(PATH="$T/pa:$T/pb:$PATH" R mytool ::: 1 2>&1)
is "$got" "b 1" "a file on PATH that is not executable is passed over"
got=$(env -u PATH $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice uname ::: -s 2>&1)
is "$got" "$(uname -s)" "PATH unset: commands are found in /bin:/usr/bin"

# --- --pipe: gpupack keeps no write end of a task's stdin pipe ---------------------------------
# (one kept would leak a descriptor per task, and a task that reads its block to the end, as wc
# does, would wait for ever). The task counts gpupack's ($PARALLEL_PID) descriptors on its stdin
# pipe that are open for writing (fdinfo's flags end in 1: O_WRONLY); gpupack writes no block
# itself (cat does), so there are none.
cat >writers <<'SH'
in=$(readlink /proc/self/fd/0) n=0
for d in /proc/"$PARALLEL_PID"/fd/*; do
	[ "$(readlink "$d")" = "$in" ] &&
	    awk '/^flags/ { exit substr($2, length($2)) != 1 }' "/proc/$PARALLEL_PID/fdinfo/${d##*/}" &&
	    n=$((n + 1))
done
echo "$n"
SH
got=$(printf 'a\nb\n' | R --pipe -N1 -k sh "$T/writers" 2>&1)
is "$got" "$(printf '0\n0')" "--pipe: no descriptor of gpupack writes into a task's stdin"

# --- --block: k is 1000 bytes, K and ki 1024 (parallel's sizes); a block ends on a record -------
blocks() { yes abcd | head -n 400 | R --pipe --block "$1" -k wc -c | tr '\n' ' '; }
is "$(blocks 1k)" "1000 1000 " "--block 1k: 1000 bytes, 200 records of 5"
is "$(blocks 1ki)" "1020 980 " "--block 1ki: 1024 bytes, so 204 records in the first"
# a block of one byte (the last record, without its newline) is copied whole too
is "$(printf 'ab\nc' | R --pipe -N1 -k wc -c 2>&1 | tr '\n' ' ')" "3 1 " "--pipe: a last block of 1 byte"
# the joblog's Send column: the bytes of each task's block, as GNU parallel writes it
printf 'ab\nc' | R --pipe -N1 -k --joblog send.jl cat >/dev/null 2>&1
is "$(awk -F'\t' 'NR > 1 { print $1 ":" $5 }' send.jl | sort -n | tr '\n' ' ')" "1:3 2:1 " "--pipe: Send is each block's bytes"
R --joblog send0.jl echo ::: x >/dev/null 2>&1
is "$(awk -F'\t' 'NR > 1 { print $5 }' send0.jl)" 0 "without --pipe: Send 0"
