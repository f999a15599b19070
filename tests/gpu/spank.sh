#!/usr/bin/env bash
# spank.sh: the Slurm plugin's daemon code (src/slurm/job*.c) on a real GPU,
# against the real nvidia-cuda-mps-control, without Slurm: tests/tools/
# jobmps-driver calls what gpupack_spank.so's job_prolog, task_init and
# job_epilog call. Run as root on the device machine, from the repository
# root (bash tests/gpu/all.sh spank). Report: $OUT/spank.md.
#
# Checks: the prolog starts one daemon per GPU as an unprivileged job user
# (nobody, or $SPANK_USER), in private directories, with no id of root; a
# task pointed at it by task_init is an MPS client held to the job's limits
# as a real client sees them (gpupack-work smcount: sms_seen about 25 % of
# the SMs; alloc: 1G allowed, 3G refused under mem=2G); the epilog ends a
# client still running (terminate_client after the grace) and leaves no MPS
# process and no directory; a leftover of "another boot" is removed by the
# next prolog. Never changes a card setting; every daemon is stopped at exit.
set -u
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=tests/gpu/lib.sh
. tests/gpu/lib.sh

GW=${GPUPACK_WORK:-$PWD/build/gpupack-work}
DRV=$PWD/build/tests/tools/jobmps-driver
JU=${SPANK_USER:-nobody}
DEV=${GPUPACK_MPS_GPU:-0}
R=$(mktemp -d /tmp/gpsl.XXXXXX)   # short: MPS's socket paths must fit in 108 bytes
chmod 755 "$R"
W="$R.work"
mkdir -p "$W"
chmod 755 "$W"

as_job() { setpriv --reuid="$JU" --regid="$(id -g "$JU")" --clear-groups "$@"; }
JUID=$(id -u "$JU")

# every process of the job user whose MPS pipe directory is ours
our_mps() {
	local p
	for p in $(ls /proc | grep '^[0-9]*$'); do
		[ "$(stat -c %u "/proc/$p" 2>/dev/null)" = "$JUID" ] || continue
		grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null && continue
		tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -q "^CUDA_MPS_PIPE_DIRECTORY=$R/" && echo "$p"
	done
}

spank_cleanup() {
	local j
	for j in 1 2 3; do "$DRV" epilog --job $j --user "$JU" -- $ARGS >/dev/null 2>&1; done
	for p in $(our_mps); do kill -9 "$p" 2>/dev/null; done
	gpu_cleanup
	rm -rf "$R" "$W"
}

gpu_init spank
trap 'spank_cleanup' EXIT
if ! make -j16 build/tests/tools/jobmps-driver >"$W/make.log" 2>&1; then
	fail "setup" "cannot build the driver: $(tail -n 3 "$W/make.log")"
	gpu_finish
	exit 1
fi
CTL=${GPUPACK_MPS_CONTROL:-$(command -v nvidia-cuda-mps-control)}
for c in /usr/local/nvidia/bin/nvidia-cuda-mps-control /usr/bin/nvidia-cuda-mps-control; do
	[ -z "$CTL" ] && [ -x "$c" ] && CTL=$c
done
ARGS="control=$CTL state=$R/%n grace=5"
info "control program: ${CTL:-not found}; job user: $JU (uid $JUID); state root: $R"
for x in "$GW" "$DRV" "$CTL"; do
	[ -x "$x" ] || { fail "setup" "$x missing"; gpu_finish; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { fail "setup" "run as root (the prolog is root's)"; gpu_finish; exit 1; }
UUID=$(nvidia-smi -i "$DEV" --query-gpu=uuid --format=csv,noheader 2>/dev/null | tr -d ' ')
SMS=$("$GW" --device "$DEV" info 2>/dev/null | grep '^{' | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["sms"])' 2>/dev/null)
info "GPU $DEV: $UUID, ${SMS:-?} SMs"

# ---- prolog: the job's daemon, as the job user, private ---------------------------------------
out=$("$DRV" prolog --job 1 --user "$JU" --node n --gpus "$DEV" --spec sm=25,mem=2G -- $ARGS 2>&1)
check $? "prolog for GPU $DEV with sm=25,mem=2G" "$out"
J="$R/n/1"
D="$J/$UUID"
[ -d "$D/pipe" ]
check $? "one daemon directory, named by the GPU's UUID" "$(ls -la "$J" 2>&1)"
bad=""
for d in "$J" "$D" "$D/pipe" "$D/log"; do
	[ "$(stat -c %u:%a "$d" 2>/dev/null)" = "$JUID:700" ] || bad="$bad $d=$(stat -c %u:%a "$d" 2>/dev/null)"
done
[ -z "$bad" ]
check $? "the job's directories are the job user's, 0700" "$bad"
P=$(sed -n 's/^pid=//p' "$D/daemon" 2>/dev/null)
ids=$(grep -E '^(Uid|Gid|Groups):' "/proc/$P/status" 2>/dev/null | tr -s '\t ' ' ' | tr '\n' ' ')
raw "control daemon $P ids" "$ids"
echo "$ids" | grep -Eq "^Uid: $JUID $JUID $JUID $JUID Gid: ([0-9]+) \\1 \\1 \\1 Groups: *\$"
check $? "the real control daemon runs as $JU, no id of root, no supplementary group" "$ids"

# ---- task_init: a real client with the job's limits ----------------------------------------------
ENVS=$(as_job "$DRV" task --job 1 --node n --visible "$DEV" -- $ARGS 2>&1)
raw "task environment" "$ENVS"
echo "$ENVS" | grep -q "^CUDA_MPS_PIPE_DIRECTORY=$D/pipe\$" && echo "$ENVS" | grep -q "^CUDA_VISIBLE_DEVICES=$UUID\$"
check $? "task_init points the task at its GPU's daemon, by UUID" "$ENVS"
# shellcheck disable=SC2046
as_job env $(echo "$ENVS" | tr '\n' ' ') "$GW" smcount >"$W/sm" 2>&1
raw "gpupack-work smcount as the task" "$(cat "$W/sm")"
SEEN=$(grep '^{' "$W/sm" | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["sms_seen"])' 2>/dev/null)
ATTR=$(grep '^{' "$W/sm" | tail -n 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["sms_attr"])' 2>/dev/null)
info "sm=25: sms_seen=${SEEN:-?} sms_attr=${ATTR:-?} of ${SMS:-?}"
python3 -c "
s, a, n = '${SEEN:-}', '${ATTR:-}', '${SMS:-}'
q = lambda v: bool(v and n) and 0.15 * float(n) <= float(v) <= 0.35 * float(n)
raise SystemExit(0 if q(s) or q(a) else 1)" 2>/dev/null
check $? "a real client sees about a quarter of the SMs (sms_seen ${SEEN:-?}, attr ${ATTR:-?} of ${SMS:-?})"
echo "$(as_job env CUDA_MPS_PIPE_DIRECTORY="$D/pipe" sh -c "echo get_default_device_pinned_mem_limit 0 | $CTL")" >"$W/lim"
raw "get_default_device_pinned_mem_limit 0" "$(cat "$W/lim")"
# shellcheck disable=SC2046
as_job env $(echo "$ENVS" | tr '\n' ' ') "$GW" alloc --mib 1024 >"$W/a1" 2>&1
check $? "mem=2G: a 1 GiB allocation succeeds" "$(tail -n 2 "$W/a1")"
# shellcheck disable=SC2046
as_job env $(echo "$ENVS" | tr '\n' ' ') "$GW" alloc --mib 3072 >"$W/a3" 2>&1
[ $? -ne 0 ]
check $? "mem=2G: a 3 GiB allocation fails" "$(tail -n 2 "$W/a3")"
raw "alloc 1G / 3G" "$(cat "$W/a1" "$W/a3")"

# ---- epilog with a client still running: ended after the grace, nothing left ---------------------
# shellcheck disable=SC2046
as_job env $(echo "$ENVS" | tr '\n' ' ') "$GW" spin --ms 120000 >"$W/spin" 2>&1 &
SPIN=$!
GPU_BG_PIDS="$GPU_BG_PIDS $SPIN"
sleep 3
t0=$(date +%s.%N)
out=$("$DRV" epilog --job 1 --user "$JU" --node n -- $ARGS 2>&1)
check $? "epilog with a client still running" "$out"
info "epilog took $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s (grace 5 s)"
wait "$SPIN" 2>/dev/null
rc=$?
raw "the client the epilog ended" "$(tail -n 3 "$W/spin")"
[ "$rc" -ne 0 ]
check $? "the client was ended (exit $rc)"
left=$(our_mps)
[ -z "$left" ]
check $? "no MPS process of the job left" "$(for p in $left; do ps -o pid,user,args -p "$p" | tail -n 1; done)"
[ -z "$(ls -A "$R/n" | grep -v '^\.lock$')" ]
check $? "no directory, no record left" "$(ls -A "$R/n")"

# ---- leftovers of a crash: cleaned by the next prolog -----------------------------------------------
mkdir -p "$R/n/77/GPU-x/pipe"
printf 'jobid=77\nuid=%s\nboot=another-boot\nstatus=ok\n' "$JUID" >"$R/n/77.job"
out=$("$DRV" prolog --job 2 --user "$JU" --node n --gpus "$DEV" -- $ARGS 2>&1)
check $? "the next job's prolog" "$out"
[ ! -e "$R/n/77" ] && [ ! -e "$R/n/77.job" ]
check $? "a job directory of another boot is removed"
out=$("$DRV" epilog --job 2 --user "$JU" --node n -- $ARGS 2>&1)
check $? "its epilog" "$out"
[ -z "$(our_mps)" ] && [ -z "$(ls -A "$R/n" | grep -v '^\.lock$')" ]
check $? "nothing left at the end"

skip "a daemon for a task that sees several GPUs" "one GPU here (tests/cli/jobmps.t covers it against the double)"
skip "MIG devices" "MIG is off on the lent card and may not be changed (tests/cli/jobmps.t covers them against the double)"
gpu_finish
