#!/bin/sh
# shellcheck disable=SC2016 # the tasks' own $VARS are literal
# run-fault-own.t: a GPU fault that the MPS server contains (driver 580 on
# the lent H100s and H200s: the faulting client ends, the others run on),
# against the control double's x_fault_own. The faulting task is held a
# moment, sees the others still running, and fails as any task does: no
# free retry, no rerun alone after the device drained (which cost a farm of
# 32 trainings at -j 16 the drain and a lone rerun of each faulting task).
# A fault that takes every client (x_fault) is run-mps.t's.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"
. "$GPUPACK_SRC/tests/cli/mps-lib.sh"

cd "$T" || exit 1
# shellcheck disable=SC2086
R() { $G run --gpus 0 "$@"; }
export CLIENT

cat >task.sh <<'SH'
if [ "$1" = f ]; then
	sleep 0.3
	echo "$GPUPACK_SEQ" >>f.runs
	echo x_fault_own 200 | "$GPUPACK_MPS_CONTROL" >/dev/null
	exit 1
fi
exec "$CLIENT" --ms 2500
SH
run R -j 8 --retries 1 --json --joblog own.jl sh task.sh ::: a b c d f
is "$rc" 1 "a contained fault: the faulting task fails (--retries 1: no retry)"
is "$(awk -F'\t' 'NR > 1 && $7 == 0' own.jl | wc -l | tr -d ' ')" 4 "the four others end done"
is "$(awk -F'\t' 'NR > 1' own.jl | wc -l | tr -d ' ')" 5 "every task is in the joblog once"
is "$(wc -l <f.runs | tr -d ' ')" 1 "the faulting task ran once: not again alone"
json=$(printf '%s\n' "$out" | tail -n 1)
is "$(printf '%s' "$json" | jq -r '.fault_retries')" 0 "no free retry: the fault was its own"

# with --retries 2 the faulting task is retried as any failure would be (beside the others)
rm -f f.runs
run R -j 8 --retries 2 --json --joblog own2.jl sh task.sh ::: a b f c
is "$rc" 1 "--retries 2: it fails again"
is "$(wc -l <f.runs | tr -d ' ')" 2 "and ran twice: --retries, not a lone rerun"
is "$(printf '%s\n' "$out" | tail -n 1 | jq -r '.retries')" 1 "one retry spent"

# a fault whose server stays in FAULT with the other clients on it, their work stopped for
# good (x_fault_stuck): past farm.fault_restart_s (10 s; 1 here) they
# are ended and run again on a restarted daemon, no --retries spent; the farm ends
# (the faulting task waits until the three others are the server's clients; their first run
# would work 20 s, their rerun 0.2 s)
cat >stuck.sh <<'SH'
echo "$1" >>stuck.runs
if [ "$1" = f ]; then
	i=0
	until [ "$(echo ps | "$GPUPACK_MPS_CONTROL" | grep -c '^[0-9]')" -ge 3 ] || [ $i -ge 600 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	echo x_fault_stuck 200 | "$GPUPACK_MPS_CONTROL" >/dev/null
	exit 1
fi
[ "$(grep -cx "$1" stuck.runs)" -gt 1 ] && exec "$CLIENT" --ms 200
exec "$CLIENT" --ms 20000
SH
GPUPACK_KNOBS=farm.fault_restart_s=1 run timeout -k 5 60 $G run --gpus 0 -j 8 --retries 1 --json --joblog stuck.jl \
	sh stuck.sh ::: a b c f
is "$rc" 1 "a fault that leaves its clients stuck: the farm ends (the faulting task failed)"
is "$(awk -F'\t' 'NR > 1 && $7 == 0' stuck.jl | wc -l | tr -d ' ')" 3 "the three stuck tasks end done, run again"
is "$(awk -F'\t' 'NR > 1' stuck.jl | wc -l | tr -d ' ')" 4 "every task is in the joblog once"
is "$(grep -c '^[abc]$' stuck.runs)" 6 "each stuck task ran twice"
like "$err" "stayed in FAULT for [0-9]+ s with 3 tasks on it; daemon restarted" "and it says why"
is "$(printf '%s\n' "$out" | tail -n 1 | jq -r '.retries')" 0 "no --retries spent on them"

# the same while the control daemon is silent (seen on an H200, fault farm e1: two clients ran on
# 48 s beside a server in FAULT, the daemon too busy to answer; a silent answer was read as "not
# in FAULT", so nobody ended them and the device took nothing new). A server known in FAULT stays
# in FAULT while its daemon says nothing: the clients are ended past farm.fault_restart_s as above.
# (Those clients spin on a CPU, as PyTorch's do: the hang rule is kept out, farm.fault_hang_s=100.)
rm -f stuck.runs
sed 's/echo x_fault_stuck 200 | "$GPUPACK_MPS_CONTROL" >\/dev\/null/&; echo "x_hang 30000" | timeout 1 "$GPUPACK_MPS_CONTROL" >\/dev\/null 2>\&1/' \
	stuck.sh >silent.sh
grep -q x_hang silent.sh || echo "Bail out! silent.sh not made"
GPUPACK_MPS_TIMEOUT=1 GPUPACK_KNOBS=farm.fault_restart_s=1,farm.fault_hang_s=100 run timeout -k 5 50 $G run --gpus 0 -j 8 --retries 1 --json \
	--joblog silent.jl sh silent.sh ::: a b c f
is "$rc" 1 "stuck clients beside a silent daemon: the farm ends (the faulting task failed)"
is "$(awk -F'\t' 'NR > 1 && $7 == 0' silent.jl | wc -l | tr -d ' ')" 3 "the three stuck tasks end done, run again"
is "$(grep -c '^[abc]$' stuck.runs)" 6 "each stuck task ran twice"
like "$err" "stayed in FAULT for [0-9]+ s with 3 tasks on it" "ended as stuck, not left to finish"
is "$(printf '%s\n' "$out" | tail -n 1 | jq -r '.retries')" 0 "no --retries spent on them"

# a contained fault whose neighbours hang (seen on an H200: the server ACTIVE, the clients
# beside the fault in a futex wait for good, no CPU): past farm.fault_hang_s (10 s; 1 here)
# without CPU time they are ended and run again, no --retries spent; a neighbour that keeps
# a CPU busy is left alone (it ran once)
cat >hang.sh <<'SH'
echo "$1" >>hang.runs
case $1 in
f)
	i=0
	until [ "$(echo ps | "$GPUPACK_MPS_CONTROL" | grep -c '^[0-9]')" -ge 2 ] || [ $i -ge 600 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	echo x_fault_own_hang 200 | "$GPUPACK_MPS_CONTROL" >/dev/null
	exit 1 ;;
c)
	# busy for 4 s of wall time: CPU time grows between any two looks
	end=$(($(date +%s) + 4))
	while [ "$(date +%s)" -lt "$end" ]; do :; done
	exit 0 ;;
esac
[ "$(grep -cx "$1" hang.runs)" -gt 1 ] && exec "$CLIENT" --ms 200
exec "$CLIENT" --ms 30000
SH
# the control program through a wrapper that notes each command it is given
cat >control.sh <<SH
#!/bin/sh
[ \$# -gt 0 ] && exec "$GPUPACK_MPS_CONTROL" "\$@"
cmd=\$(cat)
printf '%s\\n' "\$cmd" >>"$T/commands"
printf '%s\\n' "\$cmd" | exec "$GPUPACK_MPS_CONTROL"
SH
chmod +x control.sh
rm -f commands
GPUPACK_MPS_CONTROL=$T/control.sh GPUPACK_KNOBS=farm.fault_hang_s=1 run timeout -k 5 60 $G run --gpus 0 -j 8 \
	--retries 1 --json --joblog hang.jl sh hang.sh ::: a b c f
is "$rc" 1 "a contained fault whose neighbours hang: the farm ends (the faulting task failed)"
# on an H200 (fault farm k1) terminate_client of a hung client held the daemon 30 s, and the
# farm with it: a hung client is signalled, its server not asked
grep -q '^get_server_list' commands
ok $? "(the wrapper saw gpupack's commands)"
is "$(grep -c '^terminate_client' commands)" 0 "the hung clients were signalled, not terminated through the server"
is "$(awk -F'\t' 'NR > 1 && $7 == 0' hang.jl | wc -l | tr -d ' ')" 3 "the two hung tasks and the busy one end done"
is "$(awk -F'\t' 'NR > 1' hang.jl | wc -l | tr -d ' ')" 4 "every task is in the joblog once"
is "$(grep -c '^[ab]$' hang.runs) $(grep -c '^c$' hang.runs)" "4 1" "each hung task ran twice, the busy one once"
like "$err" "2 tasks that ran beside a fault used no CPU for 1 s: hung by it; ended, run again" "and it says why"
is "$(printf '%s\n' "$out" | tail -n 1 | jq -r '.retries')" 0 "no --retries spent on them"

# a task started in the moments after such a fault that never gets going (on an H200 one started
# as the server tore a device-side assert down never connected, no CPU, until the farm's limit):
# watched as those from before it are (here d, started once f's slot is free, sleeps its first run)
cat >late.sh <<'SH'
echo "$1" >>late.runs
case $1 in
f)
	i=0
	until [ "$(echo ps | "$GPUPACK_MPS_CONTROL" | grep -c '^[0-9]')" -ge 1 ] || [ $i -ge 600 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	echo x_fault_own_hang 200 | "$GPUPACK_MPS_CONTROL" >/dev/null
	exit 1 ;;
d)
	[ "$(grep -cx d late.runs)" -gt 1 ] && exit 0
	exec sleep 40 ;;
esac
[ "$(grep -cx "$1" late.runs)" -gt 1 ] && exec "$CLIENT" --ms 200
exec "$CLIENT" --ms 30000
SH
GPUPACK_KNOBS=farm.fault_hang_s=1 run timeout -k 5 35 $G run --gpus 0 -j 2 --json --joblog late.jl \
	sh late.sh ::: a f d
is "$rc" 1 "a task that hangs from its start just after a fault: the farm ends (the faulting task failed)"
is "$(awk -F'\t' 'NR > 1 && $7 == 0' late.jl | wc -l | tr -d ' ')" 2 "the hung task from before and the late one end done"
is "$(grep -c '^d$' late.runs)" 2 "the late one ran twice"

# the same when the server's log says nothing (a device-side assert on an H200 left no line
# there): the failed task's stderr names the fault, and its neighbours are watched as well
cat >quiet.sh <<'SH'
echo "$1" >>quiet.runs
if [ "$1" = f ]; then
	i=0
	until [ "$(echo ps | "$GPUPACK_MPS_CONTROL" | grep -c '^[0-9]')" -ge 2 ] || [ $i -ge 600 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	echo "torch.AcceleratorError: CUDA error: device-side assert triggered" >&2
	exit 1
fi
[ "$(grep -cx "$1" quiet.runs)" -gt 1 ] && exec "$CLIENT" --ms 200
exec "$CLIENT" --ms 30000
SH
GPUPACK_KNOBS=farm.fault_hang_s=1 run timeout -k 5 60 $G run --gpus 0 -j 8 --json --joblog quiet.jl \
	sh quiet.sh ::: a b f
is "$rc" 1 "a fault said only on stderr, its neighbours hung: the farm ends"
is "$(awk -F'\t' 'NR > 1 && $7 == 0' quiet.jl | wc -l | tr -d ' ')" 2 "the two hung tasks end done"
is "$(grep -c '^[ab]$' quiet.runs) $(grep -c '^f$' quiet.runs)" "4 1" "each ran twice, the faulting one once"
like "$err" "2 tasks that ran beside a fault used no CPU for 1 s: hung by it" "and it says why"
