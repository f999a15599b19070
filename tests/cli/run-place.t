#!/bin/sh
# shellcheck disable=SC2016,SC2013,SC2086 # the tasks' own $VARS are literal; pid and uuid lists split on purpose
# run-place.t: placement and packing on simulated machines. Every task is a
# probe that records its device and start/end times; concurrency limits are
# checked from that evidence, never from what gpupack says about itself.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

gp() {
	# shellcheck disable=SC2086
	$GPUPACK "$@"
}
PROBE="$TOOLS/farm-probe"
cd "$T" || exit 1
uuid_of() { awk -v g="$2" '$1 == "gpu" { cur = $2 } $1 == "uuid" && cur == g { print $2; exit }' "$TOPO/$1"; }
G0=$(uuid_of h200-141gb-x2.topo 0)
G1=$(uuid_of h200-141gb-x2.topo 1)

# peak LOG [DEVICE]: the most tasks running at once (on DEVICE, or anywhere). Where a check wants
# N at once, FARM_PROBE_AT_ONCE=N makes each task wait for N to run (whatever the load)
peak() {
	sort -k2,2n "$1" | awk -v d="${2:-}" 'd == "" || $3 == d {
		c += ($1 == "start") ? 1 : -1; if (c > m) m = c } END { print m + 0 }'
}
devices() { awk '$1 == "start" { print $3 }' "$1" | sort -u | tr '\n' ' '; }

# --- memory packing -----------------------------------------------------------------
FARM_PROBE_AT_ONCE=3 gp --sim "$TOPO/h100-80gb.topo" run --share timeslice --mem 20G -j 8 "$PROBE" mem.log 150 0 ::: $(seq 9)
is "$?" 0 "9 tasks of 20G on an 80 GB H100"
is "$(peak mem.log)" 3 "--mem 20G -j 8 on 79.6 GiB free: at most 3 at once (20 GiB + context each)"
out=$(gp --sim "$TOPO/h100-80gb.topo" run --share timeslice --mem 20G -j 8 --json true ::: 1)
is "$(printf '%s' "$out" | jq -r '.devices[0].slots, .devices[0].slots_limited_by' | tr '\n' ' ')" "3 --mem " \
	"--json tells the slots and what bounded them"
FARM_PROBE_AT_ONCE=4 gp --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 4 "$PROBE" j.log 150 0 ::: $(seq 8)
is "$(peak j.log)" 4 "-j 4: four at once"
gp --sim "$TOPO/h100-80gb.topo" run --share exclusive "$PROBE" ex.log 50 0 ::: $(seq 4)
is "$(peak ex.log)" 1 "--share exclusive: one at a time"

# --- two GPUs --------------------------------------------------------------------------
FARM_PROBE_AT_ONCE=4 gp --sim "$TOPO/h200-141gb-x2.topo" run --share timeslice -j 2 "$PROBE" two.log 150 0 ::: $(seq 8)
is "$(devices two.log)" "$(printf '%s\n%s\n' "$G0" "$G1" | sort | tr '\n' ' ')" "tasks spread over both GPUs"
ok "$( [ "$(peak two.log "$G0")" -le 2 ] && [ "$(peak two.log "$G1")" -le 2 ]; echo $?)" "at most -j 2 on each"
is "$(peak two.log)" 4 "four at once in all"
bad=$(awk '$1 == "start" && $3 !~ /^GPU-/' two.log | wc -l | tr -d ' ')
is "$bad" 0 "each task sees exactly one GPU UUID"
FARM_PROBE_AT_ONCE=3 gp --sim "$TOPO/h200-141gb-x2.topo" run --share timeslice -j 4 --total 3 "$PROBE" tot.log 150 0 ::: $(seq 6)
is "$(peak tot.log)" 3 "--total 3 over two GPUs"
gp --sim "$TOPO/h200-141gb-x2.topo" run --share timeslice --gpus 1 "$PROBE" sel.log 10 0 ::: 1 2
is "$(devices sel.log)" "$G1 " "--gpus 1"
CUDA_VISIBLE_DEVICES=$G1 gp --sim "$TOPO/h200-141gb-x2.topo" run --share timeslice "$PROBE" cvd.log 10 0 ::: 1 2
is "$(devices cvd.log)" "$G1 " "CUDA_VISIBLE_DEVICES=<uuid> is the default selection"
SLURM_JOB_GPUS=0 gp --sim "$TOPO/h200-141gb-x2.topo" run --share timeslice "$PROBE" slurm.log 10 0 ::: 1 2
is "$(devices slurm.log)" "$G0 " "Slurm's SLURM_JOB_GPUS is the default without CUDA_VISIBLE_DEVICES"
run env CUDA_VISIBLE_DEVICES= $GPUPACK --sim "$TOPO/h200-141gb-x2.topo" run true ::: 1
is "$rc" 255 "CUDA_VISIBLE_DEVICES set empty: no device, exit 255"
one_line "$err" "in one line"
run gp --sim "$TOPO/h200-141gb-x2.topo" run --gpus 7 true ::: 1
is "$rc" 255 "--gpus naming no device: 255"

# --- MIG -------------------------------------------------------------------------------------
migs=$(awk '$1 == "ci" || $1 == "mig" { for (i = 1; i <= NF; i++) if ($i ~ /^(uuid=)?MIG-/) { sub(/^uuid=/, "", $i); print $i } }' \
	"$TOPO/h100-80gb-mig.topo" | sort -u | tr '\n' ' ')
FARM_PROBE_AT_ONCE=4 gp --sim "$TOPO/h100-80gb-mig.topo" run --share timeslice -j 1 "$PROBE" mig.log 100 0 ::: $(seq 8)
is "$(devices mig.log)" "$migs" "a MIG GPU: tasks go to its MIG devices, one MIG UUID each"
for m in $migs; do
	[ "$(peak mig.log "$m")" -le 1 ] || bad=1
done
ok "${bad:-0}" "each MIG device is its own slot group (-j 1 each)"
is "$(peak mig.log)" "$(printf '%s\n' $migs | wc -l | tr -d ' ')" "all MIG devices busy at once"
out=$(gp --sim "$TOPO/h100-80gb-mig.topo" run --share timeslice --mem 15G -j 8 --json true ::: 1)
is "$(printf '%s' "$out" | jq -r '[.devices[].slots] | sort | map(tostring) | join(" ")')" "0 0 1 2" \
	"--mem 15G on MIG devices of 10, 10, 20 and 40 GiB: 0, 0, 1, 2 slots (each by its own memory)"
