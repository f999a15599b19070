#!/bin/sh
# newcomer.t: what a new user types first and gets wrong (issue 45), one
# check each: a --sim name that is not one lists those that are; --sim after
# the command says where it goes; timeslice set on a simulated GPU says why
# not; a mistyped command in a farm is reported once, not once per task; a
# joblog in a missing directory names the directory.
# shellcheck disable=SC2086
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
G="$GPUPACK --sim $TOPO/h100-80gb.topo"

# ---- --sim NAME: the known names --------------------------------------------
for name in h100 nosuch.topo; do
	run "$GPUPACK" --sim "$name" devices
	is "$rc" 2 "--sim $name: exit 2"
	one_line "$err" "--sim $name: one line"
	like "$err" "^gpupack: devices: simulated machine '$name': no such file, nor a topology of that name \(known: a100-40gb, .*h100-80gb, .*h200-141gb-x2\)$" \
	    "--sim $name: lists the installed names"
done
run env GPUPACK_SIM=h100 "$GPUPACK" devices
like "$err" "known: a100-40gb" "GPUPACK_SIM=h100: the same list"
run "$GPUPACK" --sim h100-80gb devices
is "$rc" 0 "--sim h100-80gb: a name that is known works"

# ---- a global option after the command ---------------------------------------
for c in devices "mps status" "mig plan" "timeslice get" bench run; do
	run "$GPUPACK" $c --sim h100-80gb
	want=2
	[ "$c" = run ] && want=255   # run exits as GNU parallel does
	is "$rc" $want "$c --sim: exit $want (usage)"
	one_line "$err" "$c --sim: one line"
	like "$err" "--sim is a global option: put it before the command, as in gpupack --sim h100-80gb ${c%% *} " \
	    "$c --sim: says to put it before the command"
done
run "$GPUPACK" devices --sim-write=x.topo
like "$err" "as in gpupack --sim-write x.topo devices" "--sim-write=FILE after the command: the same"

# ---- timeslice set on a simulated GPU ---------------------------------------
run $G timeslice set short
is "$rc" 2 "timeslice set on a simulated GPU: exit 2 (nothing changed)"
one_line "$err" "timeslice set on a simulated GPU: one line"
like "$err" "a simulated GPU has no time-slice policy to set .*--dry-run shows" "says why, and what shows the commands"
case $err in *nvidia-smi\ not\ found*) ok 1 "does not ask for nvidia-smi" ;; *) ok 0 "does not ask for nvidia-smi" ;; esac
run env PATH=/usr/bin:/bin $G timeslice set short --dry-run
is "$rc" 0 "timeslice set --dry-run on a simulated GPU: exit 0"
like "$out" "^dry run, would run: nvidia-smi compute-policy -i GPU-[0-9a-f-]+ --set-timeslice 1$" \
    "--dry-run: the command a real GPU would get"

# ---- a mistyped command: one line, not one per task ---------------------------
run $G run -j 2 nosuchcmd-gpupack ::: 1 2 3 4 5
is "$rc" 5 "five tasks of a command not found: exit 5"
is "$(printf '%s\n' "$err" | grep -c 'not found')" 1 "command not found: said once"
run $G run -k --joblog "$T/j.log" nosuchcmd-gpupack ::: 1 2 3
is "$(printf '%s\n' "$err" | grep -c 'not found')" 1 "-k: said once"
is "$(awk 'NR > 1 && $7 == 127' "$T/j.log" | wc -l | tr -d ' ')" 3 "the joblog still records every task (127)"
run $G run 'nosuch{}-gpupack' ::: 1 2
is "$(printf '%s\n' "$err" | grep -c 'not found')" 2 "a different command each: each is said"
run $G run 'echo x >&2; exit 127' ::: 1 2
is "$(printf '%s\n' "$err" | grep -c '^x$')" 2 "other output of an exit 127 is kept"

# ---- a joblog in a directory that is not there ---------------------------------
run $G run --joblog "$T/nodir/j.log" echo ::: 1
is "$rc" 255 "--joblog in a missing directory: refused"
one_line "$err" "--joblog nodir/j.log: one line"
like "$err" "^gpupack: run: --joblog '$T/nodir/j.log': its directory '$T/nodir' does not exist" \
    "names the joblog's directory"
case $err in *.lock*) ok 1 "no internal .lock file named" ;; *) ok 0 "no internal .lock file named" ;; esac
[ ! -e "$T/nodir" ]
ok $? "nothing created"

# ---- a command that sets CUDA_VISIBLE_DEVICES itself: warned once ------------------------------
X8="$GPUPACK --sim $TOPO/h100-80gb-x8.topo"
run $X8 run -j 1 'CUDA_VISIBLE_DEVICES=$(( ({%}-1) % 4 )) sh -c "echo {} \$CUDA_VISIBLE_DEVICES"' ::: 1 2 3
is "$rc" 0 "a kept CUDA_VISIBLE_DEVICES prefix: the run goes on"
is "$(printf '%s\n' "$err" | grep -c 'sets CUDA_VISIBLE_DEVICES itself')" 1 "warned once, not per task"
like "$err" "^gpupack: run: warning: the command sets CUDA_VISIBLE_DEVICES itself, which overrides the GPU gpupack places each task on" \
    "saying what it overrides"
run $X8 run env CUDA_VISIBLE_DEVICES=0 true ::: 1 2
is "$(printf '%s\n' "$err" | grep -c 'sets CUDA_VISIBLE_DEVICES itself')" 1 "env CUDA_VISIBLE_DEVICES=0 too"
run $X8 run 'echo $CUDA_VISIBLE_DEVICES ${CUDA_VISIBLE_DEVICES}' ::: 1
is "$err" "" "reading it is not setting it: no warning"
