#!/bin/sh
# jobmps.t: what the Slurm plugin's job_prolog, task_init and job_epilog do
# (src/slurm/jobmps.c), driven without Slurm by tests/tools/jobmps-driver,
# against the MPS control double and simulated GPUs. As root the job runs as
# nobody (and root itself is refused); otherwise as the caller. The plugin
# inside a real Slurm is tested by tests/slurm/ (make check-slurm).
# shellcheck disable=SC2086
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"

DRV="$TOOLS/jobmps-driver"
CTL="$TOOLS/fake-mps-control"
CLIENT="$TOOLS/fake-mps-client"
X8="$TOPO/h100-80gb-x8.topo"
chmod 755 "$T"
# the state root: short, as MPS's socket paths below it must fit in 107 bytes (state= is checked)
R=$(mktemp -d /tmp/gpj.XXXXXX)
chmod 755 "$R"
if [ "$(id -u)" -eq 0 ]; then
	USER_=nobody
	as_job() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
else
	USER_=$(id -un)
	as_job() { "$@"; }
fi
JUID=$(id -u "$USER_")
ARGS="control=$CTL state=$R/%n sim=$X8 grace=1"
export GPUPACK_MPS_TIMEOUT=5
U0=$("$GPUPACK" --sim "$X8" devices --json | jq -r '.gpus[0].uuid')
U1=$("$GPUPACK" --sim "$X8" devices --json | jq -r '.gpus[1].uuid')
U2=$("$GPUPACK" --sim "$X8" devices --json | jq -r '.gpus[2].uuid')

# every process of the job user whose MPS pipe directory lies under $R
job_procs() {
	for p in $(ls /proc | grep '^[0-9]*$'); do
		[ "$(stat -c %u "/proc/$p" 2>/dev/null)" = "$JUID" ] || continue
		grep -q Z "/proc/$p/stat" 2>/dev/null && continue
		tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -q "^CUDA_MPS_PIPE_DIRECTORY=$R/" && echo "$p"
	done
}
_job_cleanup() { for p in $(job_procs); do kill -9 "$p" 2>/dev/null; done; rm -rf "$R"; }
CLEANUP=_job_cleanup
left() { ls -A "$R/node" 2>/dev/null | grep -v '^\.lock$'; job_procs; }

# ---- prolog: one daemon per GPU, the user's, private, with the limits ----------
run "$DRV" prolog --job 7 --user "$USER_" --gpus 0,1 --spec sm=25,mem=1G -- $ARGS
is "$rc:$out" "0:ok" "prolog for GPUs 0,1 succeeds"
J="$R/node/7"
is "$(ls "$J" | sort | tr '\n' ' ')" "$(printf '%s\n' "$U0" "$U1" | sort | tr '\n' ' ')" \
	"one daemon directory per GPU, named by its UUID"
bad=""
for d in "$J" "$J/$U0" "$J/$U0/pipe" "$J/$U0/log" "$J/$U1/pipe"; do
	[ "$(stat -c %u:%a "$d")" = "$JUID:700" ] || bad="$bad $d=$(stat -c %u:%a "$d")"
done
is "$bad" "" "the job's directories are the user's, 0700"
is "$(stat -c %a "$R/node"):$(stat -c %a "$R/node/7.job")" "755:644" "the state root and the record: readable, not writable, by the user"
P0=$(sed -n 's/^pid=//p' "$J/$U0/daemon")
is "$(stat -c %u "/proc/$P0" 2>/dev/null)" "$JUID" "the daemon runs as the job's user"
is "$(echo x_limits | CUDA_MPS_PIPE_DIRECTORY="$J/$U0/pipe" as_job "$CTL")" "sm=25.0 mem=1544M priority=0" \
	"the daemon holds the limits (mem: 1G to allocate plus 520M of context)"
like "$(tr '\0' '\n' <"/proc/$P0/environ" | grep '^CUDA_VISIBLE_DEVICES=')" "=$U0\$" "the daemon serves its GPU alone"
if [ "$(id -u)" -eq 0 ]; then
	like "$(grep -E '^(Uid|Gid|Groups):' "/proc/$P0/status" | tr -s '\t ' ' ' | tr '\n' ' ')" \
		"Uid: $JUID $JUID $JUID $JUID Gid: ([0-9]+) \\1 \\1 \\1 Groups: *$" \
		"no id of the daemon is root's, no supplementary group"
else
	ok 0 "# skip ids: not root"
fi

# ---- task: pointed at its own GPU's daemon ---------------------------------------
run as_job "$DRV" task --job 7 --visible 1 -- $ARGS
like "$out" "CUDA_VISIBLE_DEVICES=$U1" "a task on GPU 1 (global index) sees it by UUID"
like "$out" "CUDA_MPS_PIPE_DIRECTORY=$J/$U1/pipe" "and talks to GPU 1's daemon"
like "$out" "GPUPACK_MPS_DIR=$J" "and gpupack inside finds the job's daemons"
c=$(as_job env $(echo "$out" | tr '\n' ' ') "$CLIENT" --ms 1)
like "$c" "^mps=1 .* sm=25.0 mem=1544M .*dev=$U1\$" "a client with that environment gets GPU 1's daemon and the limits"
# where the site constrains devices (task/cgroup, ConstrainDevices=yes), Slurm
# numbers a task's GPUs from 0 within its step: the prolog records which
"$DRV" prolog --job 12 --user "$USER_" --gpus 0,1 -- $ARGS cuda_index=local >/dev/null
run as_job "$DRV" task --job 12 --visible 0 --step 1 -- $ARGS
like "$out" "CUDA_VISIBLE_DEVICES=$U1" "local numbering: entry 0 of the step's GPUs (1) is GPU 1"
run as_job "$DRV" task --job 12 --visible 1 --step 1 -- $ARGS
like "$err" "entry 1 is not one of the step's 1 devices" "local numbering: past the step's GPUs is an error"
"$DRV" epilog --job 12 --user "$USER_" -- $ARGS >/dev/null
run as_job "$DRV" task --job 7 --visible "$U0" -- $ARGS
like "$out" "CUDA_MPS_PIPE_DIRECTORY=$J/$U0/pipe" "an entry given as a UUID"
run as_job "$DRV" task --job 7 --visible 2 -- $ARGS
is "$rc" 3 "a GPU the job does not have: an error"
one_line "$err" "a GPU the job does not have: one line"
like "$err" "GPU 2 is not a device of job 7" "it says which"
run as_job "$DRV" task --job 7 --visible NoDevFiles -- $ARGS
is "$out" "none" "a task without GPUs: nothing changes"
run as_job "$DRV" task --job 8 --visible 0 -- $ARGS
is "$out" "none" "a job without MPS here: nothing changes"

# ---- a task that sees both GPUs: one daemon for the two ----------------------------
run as_job "$DRV" task --job 7 --visible 0,1 -- $ARGS
like "$out" "CUDA_VISIBLE_DEVICES=$U0,$U1" "a task on GPUs 0 and 1 sees both"
S=$(echo "$out" | sed -n 's/^CUDA_MPS_PIPE_DIRECTORY=//p')
like "$S" "^$J/set-[0-9a-f]{16}/pipe\$" "its daemon is the set's"
c=$(as_job env $(echo "$out" | tr '\n' ' ') "$CLIENT" --ms 1)
like "$c" "sm=25.0 mem=1544M .*dev=$U0,$U1\$" "which serves both GPUs with the job's limits"
is "$(echo 'get_default_device_pinned_mem_limit 1' | CUDA_MPS_PIPE_DIRECTORY="$S" as_job "$CTL")" "1544M" \
	"the memory limit holds on its second GPU too"
run as_job "$DRV" task --job 7 --visible 1,0 -- $ARGS
ok "$([ "$(echo "$out" | sed -n 's/^CUDA_MPS_PIPE_DIRECTORY=//p')" != "$S" ] && echo 0 || echo 1)" \
	"another order is another daemon (the daemon numbers devices in its order)"

# ---- epilog: clients get a grace period, then nothing is left ------------------------
as_job env $(as_job "$DRV" task --job 7 --visible 0 -- $ARGS | tr '\n' ' ') "$CLIENT" >"$T/c.out" 2>"$T/c.err" &
CP=$!
i=0; while [ ! -s "$T/c.out" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
run "$DRV" epilog --job 7 --user "$USER_" -- $ARGS
is "$rc:$out" "0:ok" "epilog succeeds with a client still running"
wait "$CP"
is "$?" 1 "the client was ended (after the grace period)"
like "$(cat "$T/c.err")" "error 810" "by terminate_client, as MPS ends a client"
is "$(left)" "" "nothing left: no daemon, no directory, no record"

# ---- MIG devices come from Slurm as UUIDs: no driver needed -------------------------
M1=MIG-a5af4bfa-4461-460e-719c-3805d69c451d
M2=MIG-b42308d2-d6ef-193c-12f5-56a27a557bee
run "$DRV" prolog --job 9 --user "$USER_" --gpus 0 --visible "$M1,$M2" -- control=$CTL state=$R/%n grace=1
is "$rc:$out" "0:ok" "prolog for two MIG devices (by UUID) succeeds"
is "$(ls "$R/node/9" | sort | tr '\n' ' ')" "$M1 $M2 " "one daemon per MIG device"
run as_job "$DRV" task --job 9 --visible "$M2" -- control=$CTL state=$R/%n
like "$out" "CUDA_MPS_PIPE_DIRECTORY=$R/node/9/$M2/pipe" "a task on a MIG device talks to its daemon"
run "$DRV" epilog --job 9 --user "$USER_" -- control=$CTL state=$R/%n grace=1
is "$(left)" "" "nothing left of the MIG job"
run "$DRV" prolog --job 10 --user "$USER_" --gpus 0 -- control=$CTL state=$R/%n sim=$TOPO/h100-80gb-mig.topo
is "$rc" 3 "a whole MIG-enabled GPU by index: refused"
like "$err" "GPU 0 has MIG enabled: Slurm must hand out its MIG devices" "it says what to do"
"$DRV" epilog --job 10 --user "$USER_" -- $ARGS >/dev/null

# ---- a daemon that will not start ------------------------------------------------------
printf '#!/bin/sh\necho "no GPU today"\nexit 1\n' >"$T/broken"
chmod 755 "$T/broken"
run "$DRV" prolog --job 11 --user "$USER_" --gpus 0,1 -- control=$T/broken state=$R/%n sim=$X8
is "$rc" 3 "prolog with a control program that fails: exit 3"
one_line "$err" "one line"
like "$err" "MPS daemon for $U0: nvidia-cuda-mps-control -d failed \\(status 1\\): no GPU today" "it says which and why"
is "$(ls -A "$R/node" | grep -v '^\.lock$')" "11.job" "only the record stays (for the job's tasks)"
run as_job "$DRV" task --job 11 --visible 0 -- $ARGS
is "$rc" 3 "its tasks fail"
like "$err" "no GPU today" "with the same line"
run "$DRV" epilog --job 11 --user "$USER_" -- $ARGS
is "$(left)" "" "nothing left after its epilog"

# ---- leftovers of a crashed node; a live job is not touched -------------------------------
"$DRV" prolog --job 20 --user "$USER_" --gpus 2 -- $ARGS >/dev/null
P20=$(sed -n 's/^pid=//p' "$R/node/20/$U2/daemon")
mkdir -p "$R/node/30/GPU-x/pipe" "$R/node/31/GPU-x"
printf 'jobid=30\nuid=%s\nboot=not-this-boot\nstatus=ok\n' "$JUID" >"$R/node/30.job"
printf 'jobid=31\nuid=%s\nboot=%s\nstatus=ok\n' "$JUID" "$(cat /proc/sys/kernel/random/boot_id)" >"$R/node/31.job"
# a process of another boot's record is never signalled: its pid means nothing now
sleep 30 &
SP=$!
printf 'pid=%s\n' "$SP" >"$R/node/30/GPU-x/daemon"
run "$DRV" prolog --job 21 --user "$USER_" --gpus 0 -- $ARGS
is "$rc" 0 "the next job's prolog succeeds"
ok "$([ ! -e "$R/node/30" ] && [ ! -e "$R/node/30.job" ] && echo 0 || echo 1)" "a job of another boot (a crash) is removed"
ok "$([ ! -e "$R/node/31" ] && [ ! -e "$R/node/31.job" ] && echo 0 || echo 1)" "a job of this boot with nothing running is removed"
kill -0 "$SP" 2>/dev/null
ok $? "a pid named in a removed job's files is not signalled"
kill "$SP"
ok "$([ -d "$R/node/20/$U2" ] && kill -0 "$P20" 2>/dev/null && echo 0 || echo 1)" \
	"a job whose daemon runs (a live job) is untouched"
for j in 20 21; do "$DRV" epilog --job $j --user "$USER_" -- $ARGS >/dev/null; done
is "$(left)" "" "nothing left after the epilogs"

# ---- refused: root, an unsafe state root ---------------------------------------------
if [ "$(id -u)" -eq 0 ]; then
	run "$DRV" prolog --job 40 --user root --gpus 0 -- $ARGS
	is "$rc" 3 "a job of root: refused (its daemons would run as root)"
	like "$err" "the job runs as root" "it says why"
	"$DRV" epilog --job 40 --user root -- $ARGS >/dev/null
else
	ok 0 "# skip root: not root"
	ok 0 "# skip root: not root"
fi
mkdir -m 777 "$T/open" && chmod 777 "$T/open"
run "$DRV" prolog --job 41 --user "$USER_" --gpus 0 -- control=$CTL state=$T/open sim=$X8
is "$rc" 3 "a state root writable by others: refused"
like "$err" "state directory $T/open has mode 0777, writable by others" "it says why"
is "$(ls -A "$T/open")" "" "and nothing was made in it"
ln -s "$R" "$T/link"
run "$DRV" prolog --job 42 --user "$USER_" --gpus 0 -- control=$CTL state=$T/link sim=$X8
is "$rc" 3 "a state root that is a symlink: refused"
is "$(left)" "" "nothing left at the end"

# ---- a step's own SPEC: lower limits take effect, higher ones are refused, off runs without --
run "$DRV" prolog --job 50 --user "$USER_" --gpus 0 --spec sm=50,mem=2G -- $ARGS
is "$rc:$out" "0:ok" "a job with sm=50,mem=2G"
run as_job "$DRV" task --job 50 --visible 0 --spec sm=10,mem=1G -- $ARGS
is "$rc" 0 "a step that asks sm=10,mem=1G in it runs"
like "$out" "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=10" "its tasks are held to sm 10% as clients"
like "$out" "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=1544M" "and to 1G (+520M of context)"
as_job env $(printf '%s\n' "$out" | tr '\n' ' ') "$CLIENT" --ms 10 >"$T/s.out" 2>&1
like "$(cat "$T/s.out")" "mps=1 .*sm=10.0 mem=1544M" "a client of the step gets them from the job's daemon"
run as_job "$DRV" task --job 50 --visible 0 --spec sm=80 -- $ARGS
is "$rc:$(printf '%s\n' "$err" | wc -l)" "2:1" "a step that asks sm=80 of a job with sm=50: refused, one line"
like "$err" "sm=80 on a step: the job's daemons hold sm=50, and a step can only lower it" "it says why"
run as_job "$DRV" task --job 50 --visible 0 --spec mem=4G -- $ARGS
like "$rc:$err" "^2:.*mem=4G on a step: the job's daemons hold mem=2G" "mem=4G over the job's 2G: refused"
run as_job "$DRV" task --job 50 --visible 0 --spec off -- $ARGS
is "$rc:$out" "0:none" "a step that says off runs without MPS"
run as_job "$DRV" task --job 50 --visible 0 --spec priority=low -- $ARGS
like "$out" "CUDA_MPS_CLIENT_PRIORITY=1" "a step that asks priority=low gets it"
"$DRV" epilog --job 50 --user "$USER_" -- $ARGS >/dev/null

# ---- arguments and SPECs said twice, a state root too long for MPS's sockets -----------------
run "$DRV" prolog --job 51 --user "$USER_" --gpus 0 -- control=$CTL state=$R/%n grace=10 grace=20
is "$rc:$(printf '%s\n' "$err" | wc -l)" "2:1" "grace=10 grace=20: refused with one line"
like "$err" "grace= given twice \\('grace=20'\\)" "it says which"
run "$DRV" prolog --job 51 --user "$USER_" --gpus 0 --spec sm=10,sm=20 -- $ARGS
like "$rc:$err" "^2:.*'sm=10,sm=20': sm= given twice" "--gpupack-mps=sm=10,sm=20: refused"
LONG=/tmp/$(printf 'd%.0s' $(seq 40))
run "$DRV" prolog --job 51 --user "$USER_" --gpus 0 -- control=$CTL state=$LONG/%n sim=$X8
is "$rc:$(printf '%s\n' "$err" | wc -l)" "2:1" "a state= too long for MPS's socket paths: refused at the check"
like "$err" "state=$LONG/%n: too long for MPS's socket paths .*give the plugin a shorter state=" \
	"the advice names state=, not GPUPACK_STATE_DIR"
ok "$([ ! -e "$LONG" ] && echo 0 || echo 1)" "and nothing was made"
S29=$(printf 's%.0s' $(seq 26))
run "$DRV" prolog --job 51 --user "$USER_" --node n-with-a-long-name --gpus 0 -- control=$CTL state=/tmp/$S29/%n sim=$X8
like "$rc:$err" "^3:.*too long for MPS's socket paths .* on n-with-a-long-name" \
	"with %n, a node whose name makes it too long: its jobs fail with the same advice"
rm -rf "/tmp/$S29"

# ---- the prolog of a job without MPS sweeps too --------------------------------------------
run "$DRV" prolog --job 60 --user "$USER_" --gpus 0 -- $ARGS
P60=$(sed -n 's/^pid=//p' "$R/node/60/$U0/daemon")
printf 'jobid=61\nuid=%s\ngid=0\nboot=%s\nstatus=ok\n' "$JUID" "$(cat /proc/sys/kernel/random/boot_id)" >"$R/node/61.job"
mkdir -p "$R/node/61"
run "$DRV" sweep --job 62 -- $ARGS
is "$rc:$out" "0:ok" "a job without MPS: its prolog sweeps"
ok "$([ ! -e "$R/node/61" ] && [ ! -e "$R/node/61.job" ] && echo 0 || echo 1)" "what an ended job left is removed"
ok "$([ -d "$R/node/60" ] && kill -0 "$P60" 2>/dev/null && echo 0 || echo 1)" \
	"a job whose daemons run is kept (without Slurm to ask, live daemons mean a live job)"
"$DRV" epilog --job 60 --user "$USER_" -- $ARGS >/dev/null
run "$DRV" sweep --job 63 -- control=$CTL state=$R/none sim=$X8
is "$rc:$out" "0:ok" "no state root: nothing to sweep"
ok "$([ ! -e "$R/none" ] && echo 0 || echo 1)" "and none is made for it"
# ---- the prolog logs what it swept --------------------------------------------------------
printf 'jobid=64\nuid=%s\ngid=0\nboot=%s\nstatus=ok\n' "$JUID" "$(cat /proc/sys/kernel/random/boot_id)" >"$R/node/64.job"
mkdir -p "$R/node/64"
run "$DRV" prolog --job 65 --user "$USER_" --gpus 0 -- $ARGS
is "$rc" 0 "a job's prolog after an ended job's leftovers"
like "$err" "gpupack: spank: job 65 on node: removed what 1 ended job left \(job 64\)" \
	"the prolog logs which ended job's leftovers it removed"
"$DRV" epilog --job 65 --user "$USER_" -- $ARGS >/dev/null
printf 'jobid=66\nuid=%s\ngid=0\nboot=%s\nstatus=ok\n' "$JUID" "$(cat /proc/sys/kernel/random/boot_id)" >"$R/node/66.job"
run "$DRV" sweep --job 67 -- $ARGS
like "$err" "job 67 on node: removed what 1 ended job left \(job 66\)" "so does the sweep of a job without MPS"

# ---- state= without %n, used by two nodes' slurmd on one host: refused ---------------------
SH="$R/shared"
run "$DRV" prolog --job 70 --user "$USER_" --node n1 --gpus 0 -- control=$CTL state=$SH sim=$X8 grace=1
is "$rc:$out" "0:ok" "state= without %n: the first node's job runs"
P70=$(sed -n 's/^pid=//p' "$SH/70/$U0/daemon")
run "$DRV" prolog --job 71 --user "$USER_" --node n2 --gpus 1 -- control=$CTL state=$SH sim=$X8 grace=1
is "$rc" 2 "a second node's prolog on the same state root: refused (exit 2)"
one_line "$err" "one line"
like "$err" "state=$SH is node n1's, and node n2 uses it too \(several slurmd on one host share it\): give state= a %n \(state=$SH/%n\)" \
	"it says why and what to write"
ok "$([ ! -e "$SH/71" ] && [ ! -e "$SH/71.job" ] && echo 0 || echo 1)" "nothing made for the refused job"
run "$DRV" sweep --job 72 --node n2 -- control=$CTL state=$SH sim=$X8
is "$rc" 2 "the second node's sweep: refused too (exit 2)"
ok "$([ -d "$SH/70" ] && kill -0 "$P70" 2>/dev/null && echo 0 || echo 1)" \
	"the first node's running job is untouched (not swept by the other node)"
run "$DRV" epilog --job 70 --user "$USER_" --node n1 -- control=$CTL state=$SH sim=$X8 grace=1
is "$rc" 0 "the first node's job ends as ever"
# ---- a requeued job: its id runs again; the first run's daemons (no epilog ran) are ended -----
run "$DRV" prolog --job 80 --user "$USER_" --gpus 0 -- $ARGS
P80=$(sed -n 's/^pid=//p' "$R/node/80/$U0/daemon")
ok "$([ -n "$P80" ] && kill -0 "$P80" 2>/dev/null && echo 0 || echo 1)" "job 80's first run: its daemon runs"
run "$DRV" prolog --job 80 --user "$USER_" --gpus 0 -- $ARGS
is "$rc:$out" "0:ok" "job 80 requeued (its epilog never ran here): the prolog runs again"
like "$err" "a requeued job: its earlier run's MPS processes were still running here: ended" "and says what it ended"
Q80=$(sed -n 's/^pid=//p' "$R/node/80/$U0/daemon")
st80=$(sed -n 's/.*) \(.\).*/\1/p' "/proc/$P80/stat" 2>/dev/null)
ok "$([ "$Q80" != "$P80" ] && { [ -z "$st80" ] || [ "$st80" = Z ]; } && kill -0 "$Q80" 2>/dev/null && echo 0 || echo 1)" \
	"the first run's daemon is gone, the second run has its own"
"$DRV" epilog --job 80 --user "$USER_" -- $ARGS >/dev/null

is "$(left)" "" "nothing left at the end"
