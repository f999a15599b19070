#!/bin/sh
# shellcheck disable=SC2016 # the tasks' own $VARS are literal
# hostile.t: files gpupack reads that are not what they should be (a huge
# Seq, a FIFO, /dev/zero, a truncated MIG UUID), and runs whose arguments
# turn out bad: each is one line and a non-zero exit, and changes nothing
# (no --results directory made, no joblog truncated, no stray file left).
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

gp() {
	# shellcheck disable=SC2086
	$GPUPACK "$@"
}
R() { timeout -s KILL 20 $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }
cd "$T" || exit 1

# --- a joblog with Seqs far past the inputs -------------------------------------------
printf 'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n' >jl
printf '1099511627776\t:\t1.0\t1.0\t0\t0\t0\t0\techo x\n' >>jl
printf '10000000000\t:\t1.0\t1.0\t0\t0\t0\t0\techo x\n' >>jl
printf '1\t:\t1.0\t1.0\t0\t0\t0\t0\techo 1\n' >>jl
: >gpupack-sidecar
run R --joblog jl --resume -k echo ::: 1 2 3
is "$rc" 0 "--resume over a joblog with Seq 2^40 and 1e10 runs (no bitmap of 2^40 bits)"
is "$out" "$(printf '2\n3')" "and runs what has no record"

# a joblog line longer than any record: refused, not read whole into memory
rm -f jl*
{ printf 'Seq\tHost\n'; head -c 20000000 /dev/zero | tr '\0' 7; printf '\n'; } >jl
cp jl jl.before
run R --joblog jl --resume echo ::: 1
is "$rc" 255 "a joblog line over 16 MiB: exit 255"
one_line "$err" "one line"
like "$err" "longer than 16 MiB" "saying why"
cmp -s jl jl.before
ok $? "and the joblog is left as it was"

# a FIFO as the joblog, or as --sim
rm -f jl*
mkfifo fifo
run R --joblog fifo --resume echo ::: 1
is "$rc" 255 "a FIFO as --joblog: exit 255, no hang"
like "$err" "is a FIFO, not a regular file" "saying what it is"
run timeout -s KILL 20 $GPUPACK --sim fifo devices
ok $((rc == 0 || rc >= 124)) "--sim FIFO: an error exit ($rc), no hang"
one_line "$err" "one line"
run timeout -s KILL 20 $GPUPACK --sim /dev/zero devices
is "$rc" 2 "--sim /dev/zero: exit 2, not a read forever"
like "$err" "a device, not a regular file" "saying what it is"

# a truncated MIG UUID never reaches a task
sed 's/uuid=MIG-\([0-9a-f]*\)-[^ ]*/uuid=MIG-\1/' "$TOPO/h100-80gb-mig-busy.topo" >cut.topo
grep -q 'uuid=MIG-[0-9a-f]*$' cut.topo
ok $? "a topology with MIG UUIDs cut short"
run timeout -s KILL 20 $GPUPACK --sim cut.topo devices
is "$rc" 2 "is refused (exit 2)"
like "$err" "is not a whole MIG UUID" "saying so, with file:line"
one_line "$err" "one line"

# --- error exits change nothing ------------------------------------------------------
run R --results R -a missing echo
is "$rc" 255 "--results R with a missing input file: exit 255"
one_line "$err" "one line"
ok "$([ ! -e R ]; echo $?)" "and R was not created"

mkdir d && cd d || exit 1
run R --joblog . echo ::: 1
is "$rc" 255 "--joblog . (a directory): exit 255"
like "$err" "is a directory, not a regular file" "saying so"
is "$(ls -A)" "" "and no stray file is left beside it"
cd .. || exit 1

R --joblog jl echo ::: a b >/dev/null
cp jl jl.before
: >afile
run R --joblog jl --results afile echo ::: a b
is "$rc" 255 "--results naming a file: exit 255"
one_line "$err" "one line"
cmp -s jl jl.before
ok $? "and the joblog of the run before is not truncated"
mkdir adir
run R --joblog jl echo :::: adir
is "$rc" 255 ":::: naming a directory: exit 255"
like "$err" "is a directory" "saying so"
cmp -s jl jl.before
ok $? "and the joblog is not truncated"
run R --joblog jl --resume --shell 'echo {}' ::: a b
is "$rc" 255 "--resume with another command: exit 255"
cmp -s jl jl.before
ok $? "and the joblog is as it was"

# --- an input that cannot be read (EIO from /proc/self/mem): one line, exit 255 -----------
for form in ":::: /proc/self/mem" "::: a :::: /proc/self/mem"; do
	# shellcheck disable=SC2086 # the form is words on purpose
	run $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice echo $form
	is "$rc" 255 "echo $form: an input read error stops the run (exit 255)"
	like "$err" "input '/proc/self/mem': Input/output error" "and names the input"
done
