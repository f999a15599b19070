#!/bin/sh
# shellcheck disable=SC2016,SC2086 # the tasks' own $VARS are literal; lists split on purpose
# run-guard.t: no task outlives gpupack. Each task here leaves two helpers
# running while it works, one in its process group and one that left it
# (setsid); after kill -9 of gpupack the watchdog ends them all. When the
# watchdog is killed too, the next run (--resume) ends them before it
# starts a task of its own. Either way each task's side effect happens
# once (a task that finished but was not journaled yet may run again).
# The helpers work until the test releases them (a file per run), so that
# nothing here waits for a fixed time: a helper that outlived its run would
# write as soon as it is released.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

cd "$T" || exit 1
D=$T
cat >task.sh <<'SH'
#!/bin/sh
# task SEQ: two helpers working until $D/release.$RUNNO exists (one leaves the
# process group), then the task's effect. OLD: a killed run's token; its
# processes must be gone before this run's tasks start.
seq=$1
if [ -n "${OLD:-}" ] && ! "$TOOLS/run-carriers" "$OLD" >/dev/null; then
	echo "overlap $seq" >>"$D/effects"
fi
echo "start $GPUPACK_RUN $seq" >>"$D/effects"
helper='until [ -e "$D/release.$RUNNO" ]; do sleep 0.05; done; echo "helper $RUNNO $0" >>"$D/effects"'
sh -c "$helper" "$seq" &
setsid sh -c "$helper" "$seq" &
wait
echo "done $GPUPACK_RUN $seq" >>"$D/effects"
SH
chmod +x task.sh
export D TOOLS RUNNO
seq 12 >inputs

# carriers TOKEN: pids of live processes whose environment holds GPUPACK_RUN=TOKEN
carriers() { "$TOOLS/run-carriers" "$1"; }
# quiet_after_release RUNNO: release RUNNO's helpers; none may write (they must all be dead).
# A live one would write within 0.05 s; 0.3 s gives it six times that.
quiet_after_release() {
	before=$(grep -c "^helper $1 " effects)
	touch "release.$1"
	sleep 0.3
	[ "$(grep -c "^helper $1 " effects)" = "$before" ]
}
# wait_for N: until N tasks have started
wait_for() {
	i=0
	while [ "$(cat effects 2>/dev/null | grep -c '^start')" -lt "$1" ] && [ $i -lt 1200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}
# exec: run in the background, $! must be gpupack itself
farm() {
	exec $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 4 --joblog jl "$@" -a inputs ./task.sh
}

# --- kill -9 of gpupack: the watchdog ends every task's whole tree -----------------------
RUNNO=1 farm >out1 2>err1 &
gpid=$!
wait_for 4
tok=$(awk '$1 == "start" { print $2; exit }' effects)
ok "$([ -n "$tok" ]; echo $?)" "tasks carry the run's token ($tok)"
guard=$(ps -o pid=,comm= --ppid "$gpid" | awk '$2 == "gpupack-guard" { print $1 }')
ok "$([ -n "$guard" ]; echo $?)" "gpupack runs a watchdog (pid $guard)"
n=$(carriers "$tok" | wc -l)
ok $((n < 8)) "the tasks and their helpers run ($n processes)"
kill -9 "$gpid"
wait "$gpid" 2>/dev/null
i=0
while [ -n "$(carriers "$tok")" ] && [ $i -lt 600 ]; do
	sleep 0.05
	i=$((i + 1))
done
is "$(carriers "$tok" | wc -l)" 0 "after kill -9 no process of the run is left, helpers that left the group included"
# the watchdog ends the tasks first, then removes the run's record and exits: give it its moment
# (on a loaded machine it can come well after the last task died)
i=0
while st=$(ps -o stat= -p "$guard" 2>/dev/null) && [ -n "$st" ] && [ "${st#Z}" = "$st" ] && [ $i -lt 600 ]; do
	sleep 0.05
	i=$((i + 1))
done
st=$(ps -o stat= -p "$guard" 2>/dev/null)
ok "$([ -z "$st" ] || [ "${st#Z}" != "$st" ]; echo $?)" "and the watchdog is gone too"
quiet_after_release 1
ok $? "no helper of the killed run wrote anything afterwards"
is "$(ls -A "$GPUPACK_STATE_DIR/runs")" "" "the watchdog removed the run's record"
touch release.2
(RUNNO=2 OLD=$tok farm --resume >out2 2>err2)
is "$?" 0 "--resume completes"
is "$(grep -c '^overlap' effects)" 0 "no resumed task started while a process of the killed run lived"
is "$(awk '$1 == "done" { print $3 }' effects | sort -n | uniq | tr '\n' ' ')" "$(seq 12 | tr '\n' ' ')" \
	"every task's effect happened"
is "$(awk -F'\t' 'NR > 1 { print $1 }' jl | sort -n | uniq -d)" "" "and is journaled once"

# --- kill -9 of gpupack and its watchdog: the next run ends the leftovers first ---------
rm -f jl* effects release.*
RUNNO=1 farm >out1 2>err1 &
gpid=$!
wait_for 4
tok=$(awk '$1 == "start" { print $2; exit }' effects)
guard=$(ps -o pid=,comm= --ppid "$gpid" | awk '$2 == "gpupack-guard" { print $1 }')
kill -9 "$guard" "$gpid"
wait "$gpid" 2>/dev/null
sleep 0.2
left=$(carriers "$tok" | wc -l)
ok $((left == 0)) "with the watchdog killed too, helpers are left ($left)"
ls "$GPUPACK_STATE_DIR/runs" >records
is "$(wc -l <records)" 1 "and the run's record with them"
touch release.2
(RUNNO=2 OLD=$tok farm --resume >out2 2>err2)
rc=$?
is "$rc" 0 "--resume completes"
like "$(cat err2)" "ended [0-9]+ process(es)? a killed run left running" "saying it ended the leftovers"
is "$(grep -c '^overlap' effects)" 0 "before any task of its own started"
is "$(carriers "$tok" | wc -l)" 0 "none is left"
quiet_after_release 1
ok $? "and none wrote anything afterwards"
is "$(awk '$1 == "done" { print $3 }' effects | sort -n | uniq | tr '\n' ' ')" "$(seq 12 | tr '\n' ' ')" \
	"every task's effect happened"
is "$(awk -F'\t' 'NR > 1 { print $1 }' jl | sort -n | uniq -d)" "" "each journaled once"
is "$(ls -A "$GPUPACK_STATE_DIR/runs")" "" "no run record is left"

# --- a record that is not one: a FIFO in runs/ is left alone, said once ---------------------
mkfifo "$GPUPACK_STATE_DIR/runs/1-1"
run timeout -s KILL 20 $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice true ::: 1
is "$rc" 0 "a FIFO among the run records does not stop a run"
like "$err" "run record 1-1: .*FIFO" "and is named in a warning"

# --- the watchdog killed alone: gpupack says so once and finishes its run -----------------
# the tasks wait for "go", given once gpupack has said the watchdog died
printf '#!/bin/sh\nuntil [ -e "%s/go" ]; do sleep 0.05; done\n' "$T" >wait.sh
chmod +x wait.sh
$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 2 ./wait.sh ::: 1 2 3 >wout 2>werr &
gpid=$!
guard=
i=0
while [ -z "$guard" ] && [ $i -lt 300 ]; do
	guard=$(ps -o pid=,comm= --ppid "$gpid" | awk '$2 == "gpupack-guard" { print $1 }')
	[ -z "$guard" ] && sleep 0.1
	i=$((i + 1))
done
kill -9 "$guard"
i=0
while ! grep -q "the watchdog (pid $guard) died" werr && [ $i -lt 600 ]; do
	sleep 0.05
	i=$((i + 1))
done
touch go
wait "$gpid"
is "$?" 0 "the watchdog killed alone: the run still completes"
is "$(grep -c "the watchdog (pid $guard) died" werr)" 1 "and says once that the watchdog died"
