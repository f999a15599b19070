#!/bin/sh
# messages.t: messages a newcomer met that contradicted the program or each
# other (issue 32), one check each: a device that does not exist is called
# so, not "no daemon"; devices and mps status name a daemon's state with one
# key and one word; devices --profiles and mig profiles print one table.
# $G is a command line on purpose (gpupack --sim FILE): split it.
# shellcheck disable=SC2086
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
. "$GPUPACK_SRC/tests/cli/mps-lib.sh"

# ---- a device that does not exist ------------------------------------------
for c in status stop env; do
	for sel in 9 GPU-ffffffff-0000-0000-0000-000000000000; do
		run $G mps $c --gpus $sel
		is "$rc" 2 "mps $c --gpus $sel: exit 2"
		one_line "$err" "mps $c --gpus $sel: one line"
		like "$err" "^gpupack: mps $c: device '?$sel'?: no (such GPU|GPU or MIG device has that)" \
		    "mps $c --gpus $sel: no such device (not 'no daemon')"
	done
done
run $G mps status --gpus 1
is "$rc" 2 "mps status --gpus 1 (a GPU without a daemon): exit 2"
like "$err" "^gpupack: mps status: no MPS daemon of gpupack for device '1' \(gpupack mps start --gpus 1 starts one\)$" \
    "a GPU that exists but has no daemon: says so, and how to start one"
# without a driver to ask, what can be said is said
run env GPUPACK_NVML_LIB="$T/no-such-lib.so" "$GPUPACK" mps status --gpus 9
is "$rc" 2 "no driver: mps status --gpus 9: exit 2"
like "$err" "^gpupack: mps status: no MPS daemon of gpupack for device '9'$" "no driver: no daemon for it"

# ---- one key, one word for a daemon's state ----------------------------------
run $G mps start --gpus 0
is "$rc" 0 "a daemon started"
st=$($G mps status --json | jq -r '.daemons[0].state')
dv=$($G devices --json | jq -r '.mps_daemons[0].state')
is "$st" running "mps status --json: state running"
is "$dv" "$st" "devices --json: the same key and word"
is "$($G devices --json | jq -r '.mps_daemons[0] | has("alive")')" false "devices --json: no second key (alive)"
# a daemon that died: both say stale
kill -9 "$(daemon_pid "$U0")"
gone "$(daemon_pid "$U0")"
is "$($G mps status --json | jq -r '.daemons[0].state')" stale "mps status: a dead daemon is stale"
is "$($G devices --json | jq -r '.mps_daemons[0].state')" stale "devices: the same word"
$G mps stop --gpus 0 >/dev/null 2>&1

# ---- one profile table --------------------------------------------------------
for topo in h100-80gb h200-141gb-x2 a30-24gb h100-80gb-mig; do
	g="$GPUPACK --sim $TOPO/$topo.topo"
	# devices --profiles: the blocks after the device table, up to the MPS section
	$g devices --profiles | awk '/^GPU [0-9]+  /{p=1} /^MPS daemons/{p=0} p && NF' >"$T/dev.txt"
	$g mig profiles >"$T/mig.txt"
	cmp -s "$T/dev.txt" "$T/mig.txt"
	ok $? "$topo: devices --profiles and mig profiles print the same table"
	grep -Eq '^  PROFILE +ID +INDEX +SLICES +MEMORY +SMS +MAX +CE +PLACEMENTS$' "$T/mig.txt"
	ok $? "$topo: the columns"
	like "$(cat "$T/mig.txt")" "0\+1,1\+1" "$topo: placements comma-separated, as in topology files"
done
