#!/bin/sh
# shellcheck disable=SC2016 # the tasks' own $VARS are literal
# run-mps-shared.t: two farms of one user share a device's MPS daemon (two
# jobs or steps on a node; issue 42, defect 3). The daemon is stopped by the
# last farm that uses it, whichever started it: killed with kill -9, the farm
# that started it leaves it (its watchdog included) to the other, whose
# tasks all end done; no daemon is left without a run.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"
. "$GPUPACK_SRC/tests/cli/mps-lib.sh"

cd "$T" || exit 1
U=$U0
# waits up to 20 s for the daemon of GPU 0
await_daemon() { i=0; while [ -z "$(daemon_pid "$U")" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done; }
# waits up to 20 s for N records in a joblog
await_records() { i=0; while [ "$(awk 'NR > 1' "$1" 2>/dev/null | wc -l)" -lt "$2" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done; }

# --- the farm that started it is killed: the other goes on, and stops it at its end ---------------
# shellcheck disable=SC2086
$G run --gpus 0 -j 2 --joblog a.jl "$CLIENT" --ms 30000 --pidfile a{} ::: 1 2 3 >a.out 2>a.err &
apid=$!
await_daemon
d=$(daemon_pid "$U")
ok "$( [ -n "$d" ]; echo $?)" "farm A started the daemon (pid $d)"
# shellcheck disable=SC2086
$G run --gpus 0 -j 2 --joblog b.jl "$CLIENT" --ms 1200 --pidfile b{} ::: 1 2 3 4 5 6 >b.out 2>b.err &
bpid=$!
await_records b.jl 1
kill -9 "$apid"
wait "$apid" 2>/dev/null
wait "$bpid"
brc=$?
is "$brc" 0 "farm A killed with kill -9 while B used its daemon: B ends well"
is "$(awk -F'\t' 'NR > 1 && $7 == 0' b.jl | wc -l | tr -d ' ')" 6 "every task of B recorded done"
ok "$(grep -q 'MPS on' b.err && echo 1 || echo 0)" "B saw no MPS fault"
is "$(grep -c '^mps=1 ' b.out)" 6 "every task of B ran as a client of the daemon"
gone "$d"
ok $? "B, its last user, stopped the daemon at its end"
is "$(count_daemons)" 0 "no daemon is left"

# --- the other ends first: the daemon stays for the farm that started it, which stops it ----------
# shellcheck disable=SC2086
$G run --gpus 0 -j 2 --joblog c.jl "$CLIENT" --ms 2500 --pidfile c{} ::: 1 2 >c.out 2>c.err &
cpid=$!
await_daemon
d=$(daemon_pid "$U")
run $G run --gpus 0 -j 2 "$CLIENT" --ms 100 --pidfile d{} ::: 1 2
is "$rc" 0 "a short farm beside it ends"
alive "$d"
ok $? "and leaves the daemon to the farm that still uses it"
wait "$cpid"
is "$?" 0 "the farm that started it ends well"
gone "$d"
ok $? "and stops the daemon: it was its last user"
is "$(count_daemons)" 0 "no daemon is left"
