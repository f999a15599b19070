#!/bin/sh
# timeslice.t: `gpupack timeslice get|set` against a fake nvidia-smi that
# prints fixture listings (tests/fixtures/compute-policy-*.txt) and records
# the set commands it gets. Never a real nvidia-smi: set changes a card.
# $G is a command line on purpose (gpupack --sim FILE): split it.
# shellcheck disable=SC2086
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"

export GPUPACK_NVIDIA_SMI="$GPUPACK_SRC/tests/tools/fake-nvidia-smi"
export FAKE_SMI_LOG="$T/smi.log"
FIX="$GPUPACK_SRC/tests/fixtures"
U0=GPU-0a0a0a0a-1111-2222-3333-444444444444
U1=GPU-1b1b1b1b-5555-6666-7777-888888888888
cat >"$T/m.topo" <<TOPO
gpupack-topology 1
driver 580.159.04
cuda 13.0
gpu 0
uuid $U0
name NVIDIA H100 80GB HBM3
pci 00000000:19:00.0
memory total=81559MiB
sms 132
compute-capability 9.0
mig current=disabled pending=disabled
gpu 1
uuid $U1
name NVIDIA H100 80GB HBM3
pci 00000000:3B:00.0
memory total=81559MiB
sms 132
compute-capability 9.0
mig current=disabled pending=disabled
TOPO
G="$GPUPACK --sim $T/m.topo"

# ---- get: layouts ------------------------------------------------------------------
export FAKE_SMI_LIST="$FIX/compute-policy-table.txt"
run $G timeslice get --json
is "$rc" 0 "get --json (boxed table) succeeds"
is "$(printf '%s' "$out" | jq -r '[.gpus[] | "\(.index)=\(.timeslice)"] | join(" ")')" "0=default 1=long" \
	"table rows: GPU 0 default, GPU 1 long"
is "$(printf '%s' "$out" | jq -r '.gpus[1].uuid')" "$U1" "rows are named by the backend's uuid"
run $G timeslice get
like "$out" "^ +1 +$U1 +NVIDIA H100 80GB HBM3 +long" "human table"
run $G timeslice get --gpu 1 --json
is "$(printf '%s' "$out" | jq -r '[.gpus[].index] | join(",")')" 1 "--gpu 1 lists only GPU 1"
run $G timeslice get --gpu "$U0" --json
is "$(printf '%s' "$out" | jq -r '[.gpus[].timeslice] | join(",")')" default "--gpu UUID"

# what driver 580 printed on the lent H200 (bench/results/2026-11-22-probe-h200.txt)
export FAKE_SMI_LIST="$FIX/compute-policy-h200.txt"
run $G timeslice get --json
is "$rc" 0 "get (the H200's own listing) succeeds"
is "$(printf '%s' "$out" | jq -r '[.gpus[] | "\(.index)=\(.timeslice)=\(.uuid)"] | join(" ")')" "0=default=$U0" \
	"the H200 listing: GPU 0 default, and only that (the header row is not a GPU)"

export FAKE_SMI_LIST="$FIX/compute-policy-headings.txt"
run $G timeslice get --json
is "$rc" 0 "get (headings with bus ids, an unknown policy line) succeeds"
is "$(printf '%s' "$out" | jq -r '[.gpus[] | "\(.uuid)=\(.timeslice)"] | join(" ")')" "$U0=short $U1=medium" \
	"bus ids are matched to the backend's GPUs; unknown lines skipped"

export FAKE_SMI_LIST="$FIX/compute-policy-single.txt"
run $G timeslice get --json
is "$(printf '%s' "$out" | jq -r '[.gpus[] | "\(.index)=\(.timeslice)"] | join(" ")')" "0=default" \
	"a single 'Timeslice Default' line is GPU 0"

# ---- get: failures -----------------------------------------------------------------------
export FAKE_SMI_LIST="$FIX/compute-policy-junk.txt"
run $G timeslice get
is "$rc" 3 "a listing without any time-slice policy: exit 3"
one_line "$err" "unreadable listing: one line"
run env FAKE_SMI_RC=6 $G timeslice get
is "$rc" 3 "nvidia-smi failing: exit 3"
like "$err" "Not Supported" "its message is passed on"
one_line "$err" "nvidia-smi failing: one line"
run env GPUPACK_NVIDIA_SMI=/nonexistent/nvidia-smi $G timeslice get
is "$rc" 3 "nvidia-smi missing: exit 3"
one_line "$err" "nvidia-smi missing: one line"
run $G timeslice get --gpu 9
is "$rc" 2 "get on a GPU that does not exist: exit 2"

# ---- set ---------------------------------------------------------------------------------------
run $G timeslice set long --gpu 1 --dry-run
is "$rc" 0 "set --dry-run succeeds"
like "$out" "dry run, would run: .*fake-nvidia-smi compute-policy -i $U1 --set-timeslice 3$" \
	"--dry-run prints the command"
[ ! -e "$FAKE_SMI_LOG" ]
ok $? "--dry-run runs nothing"

if [ "$(id -u)" -eq 0 ]; then
	run $G timeslice set short
	is "$rc" 0 "set short on every GPU (as root) succeeds"
	is "$(cat "$FAKE_SMI_LOG")" "compute-policy -i $U0 --set-timeslice 1
compute-policy -i $U1 --set-timeslice 1" "nvidia-smi got one set command per GPU, by uuid"
	like "$out" "running: .*compute-policy -i $U0 --set-timeslice 1" "set prints what it runs"
	run env FAKE_SMI_RC=4 $G timeslice set default --gpu 0
	is "$rc" 3 "nvidia-smi refusing the set: exit 3"
	like "$err" "Insufficient Permissions" "with nvidia-smi's reason"
	rm -f "$FAKE_SMI_LOG"
	chmod 755 "$T"
	run setpriv --reuid=nobody --regid=nogroup --clear-groups env GPUPACK_STATE_DIR="$T/nobody" \
		$G timeslice set long
	is "$rc" 3 "set as another user than root: exit 3"
	like "$err" "needs root" "it says it needs root"
	[ ! -e "$FAKE_SMI_LOG" ]
	ok $? "and runs nothing"
	chmod 700 "$T"
else
	run $G timeslice set long
	is "$rc" 3 "set without root: exit 3"
	like "$err" "needs root" "it says it needs root"
	for _ in 1 2 3 4 5 6; do ok 0 "# skip needs root"; done
fi

for a in "set fast" "set 2" "set" "set long extra" "get --bogus" "frob"; do
	# shellcheck disable=SC2086
	run $G timeslice $a
	is "$rc" 2 "timeslice $a: exit 2"
	one_line "$err" "timeslice $a: one line"
done
[ ! -e "$FAKE_SMI_LOG" ]
ok $? "bad input runs nothing"

# ---- a simulated machine answers for itself (no nvidia-smi needed) ------------------
run env -u GPUPACK_NVIDIA_SMI PATH=/nonexistent $G timeslice get --json
is "$rc" 0 "get under --sim without nvidia-smi succeeds"
is "$(printf '%s' "$out" | jq -r '.source, (.gpus | map(.timeslice) | join(","))' | tr '\n' ' ')" \
	"simulation default,default " "the simulated GPUs have the driver's default policy"
