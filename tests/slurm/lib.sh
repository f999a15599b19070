# lib.sh: a real Slurm for the tests in tests/slurm/ (source after tests/lib.sh).
#
# One host, Debian 12's Slurm 22.05 (slurmctld, slurmd, munge; .ci/run installs
# them): four slurmd nodes n1..n4 on loopback ports picked free at random, four
# fake GPUs each through gres (File= symlinks to /dev/null: Slurm wants
# character devices), eight of them as the doc's job scripts have, the simulated machine GPUPACK_SIM for the plugin's GPU
# lookups, the MPS control double in place of nvidia-cuda-mps-control, and
# gpupack_spank.so on the plugstack.conf line. Jobs run as the unprivileged
# user gpslurm, created here when missing. Everything lives in $T (removed at
# exit); daemons are stopped by the pids they recorded, never by name.
#
#   slurm_up [PLUGIN ARGS...]   bring it up (the plugin's arguments replace the defaults)
#   slurm_down                  stop it (also at exit)
#   as_user CMD...              run a client command (sbatch, srun, squeue) as gpslurm
#   job_wait ID [SECONDS]       wait until job ID has left the queue
#   mps_left NODE               what a node's state root still holds (daemons, directories)
#
# Without root or without the packages the tests are skipped, unless
# GPUPACK_SLURM_REQUIRED=1 (CI sets it): then that is a failure.
# shellcheck shell=bash

SL_USER=gpslurm
SL_NODES=4
SL_GPUS=8
SL_CPUS=8
SL_TOPO="$GPUPACK_SRC/topologies/h100-80gb-x8.topo"
SL_PIDS=""
# the plugin slurmd loads: the build's, or another (packaging/fresh-debian-debs.sh: the package's)
SL_PLUGIN=${SL_PLUGIN:-$GPUPACK_BUILD/gpupack_spank.so}

slurm_skip() {
	if [ "${GPUPACK_SLURM_REQUIRED:-0}" = 1 ]; then
		echo "not ok 1 - $1 (GPUPACK_SLURM_REQUIRED=1)"
		_tap_n=1
		_tap_fail=1
		exit 1
	fi
	echo "1..0 # SKIP $1"
	trap - EXIT
	rm -rf "$T"
	exit 0
}

slurm_check_prereqs() {
	[ "$(id -u)" -eq 0 ] || slurm_skip "needs root (slurmd runs as root)"
	for c in slurmctld slurmd munged srun sbatch squeue scontrol; do
		command -v "$c" >/dev/null 2>&1 || slurm_skip "$c not installed (apt-get install slurmctld slurmd slurm-client munge)"
	done
	[ -f "$SL_PLUGIN" ] || slurm_skip "$SL_PLUGIN not built (install libslurm-dev, then make)"
	if ! id "$SL_USER" >/dev/null 2>&1; then
		useradd --system --no-create-home --home-dir / --shell /bin/sh "$SL_USER" 2>/dev/null ||
			slurm_skip "cannot create the job user $SL_USER"
	fi
	SL_UID=$(id -u "$SL_USER")
	export SL_UID
}

# a port nobody listens on, at random in 20000..59999
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		ss -Htln "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return; }
	done
}

# N consecutive free ports: the first of them
free_ports() {
	local n=$1 p ok i
	while :; do
		p=$(free_port)
		ok=1
		for ((i = 1; i < n; i++)); do
			ss -Htln "sport = :$((p + i))" 2>/dev/null | grep -q . && ok=0
		done
		[ "$ok" = 1 ] && [ $((p + n)) -lt 60000 ] && { echo "$p"; return; }
	done
}

pid_of() { # pidfile comm: the pid if that process runs that program
	local pid
	[ -s "$1" ] || return 1
	pid=$(tr -dc 0-9 <"$1")
	[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && echo "$pid"
}

wait_until() { # seconds command...
	local end=$(($(date +%s) + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.1
	done
}

all_idle() {
	[ "$(sinfo -h -N -o '%T' 2>/dev/null | grep -c '^idle$')" -eq "$SL_NODES" ]
}

# slurm_up [PLUGIN ARGS...]: a second try on other ports when the first fails
# (a loaded machine, a port taken between the check and the bind); why on stderr
slurm_up() {
	local try
	slurm_check_prereqs
	for try in 1 2; do
		slurm_up_once "$@" && return 0
		diag "bring-up $try failed; logs: $(tail -n 3 "$T"/slurm/log/*.log 2>/dev/null | tr '\n' ' ')" >&2
		slurm_down
		rm -rf "$T/slurm"
	done
	return 1
}

slurm_up_once() {
	local D=$T/slurm ctld first last i args
	chmod 755 "$T"
	mkdir -p "$D"/{etc,state,spool,log,run,dev,jobs,munge,mps}
	chmod 755 "$D" "$D/run" "$D/etc" "$D/dev"
	chmod 700 "$D/munge" "$D/state"
	chmod 1777 "$D/jobs"
	dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
	chmod 400 "$D/munge/munge.key"
	for ((i = 0; i < SL_GPUS; i++)); do ln -sfn /dev/null "$D/dev/nvidia$i"; done
	ctld=$(free_port)
	first=$(free_ports "$SL_NODES")
	last=$((first + SL_NODES - 1))
	# the plugin's state root: short, as MPS's socket paths below it must fit in 107 bytes
	SL_MPS=$(mktemp -d /tmp/gpsl.XXXXXX)
	chmod 755 "$SL_MPS"
	if [ $# -gt 0 ]; then args="$*"; else
		args="control=$TOOLS/fake-mps-control state=$SL_MPS/%n grace=2 sim=$SL_TOPO"
	fi
	SL_ARGS=$args
	cat >"$D/etc/slurm.conf" <<EOF
ClusterName=gptest
SlurmctldHost=localhost
SlurmctldPort=$ctld
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/run/munge.sock,cred_expire=${SL_CRED_EXPIRE:-30}
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/run/slurmctld.pid
SlurmdPidFile=$D/run/slurmd-%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=${SL_SLURMD_DEBUG:-info}
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
KillWait=15
MessageTimeout=30
SlurmdTimeout=120
SlurmdParameters=config_overrides
GresTypes=gpu
PlugStackConfig=$D/etc/plugstack.conf
NodeName=n[1-$SL_NODES] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[$first-$last] CPUs=$SL_CPUS RealMemory=1000 Gres=gpu:$SL_GPUS State=UNKNOWN
PartitionName=debug Nodes=n[1-$SL_NODES] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
	echo "Name=gpu File=$D/dev/nvidia[0-$((SL_GPUS - 1))]" >"$D/etc/gres.conf"
	echo "required $SL_PLUGIN $args" >"$D/etc/plugstack.conf"
	export SLURM_CONF="$D/etc/slurm.conf"
	SL_DIR=$D
	CLEANUP=slurm_down

	munged --force --socket="$D/run/munge.sock" --key-file="$D/munge/munge.key" \
		--pid-file="$D/run/munged.pid" --log-file="$D/log/munged.log" --seed-file="$D/munge/munged.seed" ||
		slurm_skip "munged did not start"
	wait_until 10 sh -c "munge -S '$D/run/munge.sock' -n | unmunge -S '$D/run/munge.sock'" ||
		{ diag "munged does not answer" >&2; return 1; }
	slurmctld -f "$SLURM_CONF" || { diag "slurmctld did not start" >&2; return 1; }
	wait_until 60 sh -c "scontrol ping | grep -q UP" || { diag "slurmctld not up: $(tail -5 "$D/log/slurmctld.log")" >&2; return 1; }
	for ((i = 1; i <= SL_NODES; i++)); do
		mkdir -p "$D/spool/n$i"
		# the plugin finds the fake GPUs through the simulated machine, and its control double
		env GPUPACK_SIM="$SL_TOPO" GPUPACK_MPS_TIMEOUT=10 SLURM_CONF="$SLURM_CONF" \
			slurmd -f "$SLURM_CONF" -N "n$i" || { diag "slurmd n$i did not start" >&2; return 1; }
	done
	wait_until 60 all_idle || { diag "nodes not idle: $(sinfo -N -o "%N %T %E" 2>&1 | tr "\n" ";")" >&2; return 1; }
	return 0
}

# stop everything by pid, in parallel; then what a stuck step left
slurm_down() {
	local D=$SL_DIR f pid pids="" i
	[ -n "${SL_DIR:-}" ] && [ -d "$D" ] || return 0
	if pid_of "$D/run/slurmctld.pid" slurmctld >/dev/null; then
		scancel --full $(squeue -h -o %i 2>/dev/null) 2>/dev/null
		for i in $(seq 50); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.1; done
	fi
	pid=$(pid_of "$D/run/slurmctld.pid" slurmctld) && kill -TERM "$pid" 2>/dev/null && pids="$pids $pid"
	for f in "$D"/run/slurmd-*.pid; do
		pid=$(pid_of "$f" slurmd) && kill -TERM "$pid" 2>/dev/null && pids="$pids $pid"
	done
	for i in $(seq 100); do
		local left=""
		for pid in $pids; do [ -d "/proc/$pid" ] && left="$left $pid"; done
		[ -z "$left" ] && break
		sleep 0.1
	done
	for pid in $pids; do kill -KILL "$pid" 2>/dev/null; done
	# slurmstepd of ours: it has a file open under $D
	for pid in $(pgrep -x slurmstepd 2>/dev/null); do
		ls -l "/proc/$pid/fd" 2>/dev/null | grep -q -- "-> $D/" && kill -KILL "$pid" 2>/dev/null
	done
	# MPS processes the tests started: by their pipe directory, under $D
	for pid in $(ls /proc | grep '^[0-9]*$'); do
		tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -q -e "^CUDA_MPS_PIPE_DIRECTORY=$D/" \
			-e "^CUDA_MPS_PIPE_DIRECTORY=${SL_MPS:-$D}/" && kill -KILL "$pid" 2>/dev/null
	done
	[ -n "${SL_MPS:-}" ] && rm -rf "$SL_MPS"
	SL_MPS=
	pid=$(pid_of "$D/run/munged.pid" munged) && kill -TERM "$pid" 2>/dev/null
	for pid in $SL_PIDS; do kill -KILL "$pid" 2>/dev/null; done
	SL_DIR=""
	return 0
}

# as_user CMD...: a Slurm client run as the job user, in the jobs directory
as_user() {
	(cd "$SL_DIR/jobs" && setpriv --reuid="$SL_USER" --regid="$(id -g "$SL_USER")" --clear-groups \
		env SLURM_CONF="$SLURM_CONF" PATH="$PATH" HOME=/ "$@")
}

job_gone() { [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; }

# job_wait ID [SECONDS]: until the job has left the queue (and its epilog ran)
job_wait() {
	wait_until "${2:-120}" job_gone "$1" || return 1
	# the epilog runs as the job completes; give it a moment to finish on every node
	wait_until 30 sh -c "! squeue -h -t CG -j $1 -o %i 2>/dev/null | grep -q ."
}

# job_running ID: the job runs
job_running() { [ "$(squeue -h -j "$1" -o %T 2>/dev/null)" = RUNNING ]; }

# mps_left NODE: what of the plugin's is left on a node: job directories and
# records, and MPS processes of the job user (one line each; empty when none)
mps_left() {
	local pid
	ls -A "$SL_MPS/$1" 2>/dev/null | grep -v '^\.lock$' | sed "s|^|$1: |"
	for pid in $(ls /proc | grep '^[0-9]*$'); do
		tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -q "^CUDA_MPS_PIPE_DIRECTORY=$SL_MPS/$1/" &&
			[ "$(stat -c %U "/proc/$pid" 2>/dev/null)" = "$SL_USER" ] &&
			! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null &&
			echo "$1: process $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
	done
}

all_left() {
	local n
	for n in $(seq 1 "$SL_NODES"); do mps_left "n$n"; done
}

nothing_left() { [ -z "$(all_left)" ]; }

# a job script in the jobs directory (readable by the job user)
job_script() { # name: body on stdin
	cat >"$SL_DIR/jobs/$1"
	chmod 755 "$SL_DIR/jobs/$1"
	echo "$SL_DIR/jobs/$1"
}
