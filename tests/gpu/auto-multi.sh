#!/usr/bin/env bash
# auto-multi.sh: -j auto (the default) on every GPU of the machine at once,
# one controller per device: a farm of small SGEMM tasks under mps and under
# timeslice, and one under --total. Meant for nvidia-h200-x2 (two GPUs); on
# one GPU it still checks the single device and skips the rest. Run through
# tests/gpu/all.sh auto-multi.
#
# Checks: every task done once; each device has its own auto block (its
# decisions, its settled count) and ran tasks; each task saw only its own
# GPU; under --total N no device's limit ever went past its share and the
# limits together never past N. Never changes a card setting; each run
# starts and stops its own MPS daemons.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/gpu/lib.sh
. tests/gpu/lib.sh
export GPU_COMMAND="bash tests/gpu/auto-multi.sh"
gpu_init auto-multi

G=$PWD/build/gpupack
W=$PWD/build/gpupack-work
TMP=$(mktemp -d /tmp/gam.XXXXXX)
chmod 700 "$TMP"
trap 'gpu_cleanup; rm -rf "$TMP"' EXIT
NGPU=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
N=${N:-48}
info "GPUs: $NGPU; $N tasks per farm"

# farm NAME ARGS...: the default -j auto over every GPU; the summary in $TMP/NAME.out
farm() {
	local name=$1
	shift
	GPUPACK_STATE_DIR=$TMP/st-$name timeout -k 5 240 "$G" run "$@" --json --joblog "$TMP/$name.jl" \
		--results "$TMP/res-$name" \
		--shell ": {}; echo \"want=\$GPUPACK_GPU\"; $W info && exec $W matmul --n 512 --iters 20000" \
		::: $(seq "$N") >"$TMP/$name.out" 2>"$TMP/$name.err"
	local rc=$?
	GPUPACK_STATE_DIR=$TMP/st-$name "$G" mps stop --all --force >/dev/null 2>&1
	check "$rc" "$name: gpupack run exits 0" "rc=$rc: $(tail -n 2 "$TMP/$name.err")"
	local done_once
	done_once=$(awk -F'\t' 'NR > 1 && $7 == 0 { print $1 }' "$TMP/$name.jl" | sort -u | wc -l)
	check "$([ "$done_once" = "$N" ] && [ "$(($(wc -l <"$TMP/$name.jl") - 1))" = "$N" ]; echo $?)" \
		"$name: every task done once in the joblog ($done_once of $N)"
	local mismatch=0 f want got
	for f in "$TMP/res-$name"/1/*/stdout; do
		want=$(sed -n 's/^want=//p' "$f")
		got=$(grep '"mode":"info"' "$f" | grep -o '"uuid":"[^"]*"' | cut -d'"' -f4)
		[ -n "$want" ] && [ "$want" = "$got" ] || mismatch=$((mismatch + 1))
	done
	check "$mismatch" "$name: each task saw only its own GPU" "$mismatch mismatches"
	# per device: tasks, auto block, decisions, the largest limit
	python3 - "$TMP/$name.out" "$NGPU" "${TOTAL:-0}" >"$TMP/$name.dev" 2>&1 <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
ngpu, total = int(sys.argv[2]), int(sys.argv[3])
devs = d["devices"]
bad = []
maxes = []
for x in devs:
    a = x.get("auto")
    if not a or not a.get("decisions"):
        bad.append("%s: no auto block" % x["uuid"][:12])
        continue
    m = max(dd["limit"] for dd in a["decisions"])
    maxes.append(m)
    if x.get("tasks", 0) <= 0:
        bad.append("%s: ran no task" % x["uuid"][:12])
    print("DEV %s tasks %d start %s settled %s max-limit %d decisions %d busy %.2f" % (
        x["uuid"][:12], x.get("tasks", 0), a["start"], a["settled"], m, len(a["decisions"]), x.get("busy_share", 0)))
if len(devs) != ngpu:
    bad.append("%d devices in the summary, %d GPUs" % (len(devs), ngpu))
if total and sum(maxes) > total:
    bad.append("limits together %d > --total %d" % (sum(maxes), total))
print("BAD " + "; ".join(bad) if bad else "OK")
PY
	case $name in fixed*) info "RESULT $name: makespan $(grep -o '"makespan_s":[0-9.]*' "$TMP/$name.out" | cut -d: -f2) s"; return ;; esac
	check "$(grep -q '^OK' "$TMP/$name.dev"; echo $?)" "$name: one controller per GPU, each ran tasks$([ "${TOTAL:-0}" != 0 ] && echo ", limits within --total $TOTAL")" "$(grep '^BAD' "$TMP/$name.dev")"
	info "RESULT $name: makespan $(grep -o '"makespan_s":[0-9.]*' "$TMP/$name.out" | cut -d: -f2) s; $(grep '^DEV' "$TMP/$name.dev" | tr '\n' ' ')"
	raw "$name summary" "$(tail -n 1 "$TMP/$name.out")"
}

"$G" run -j 1 "$W" matmul --n 512 --iters 100 ::: 0 >/dev/null 2>&1
farm mps --share mps
# fixed counts beside it, for the ratio (not a check: one run each)
farm fixed4 --share mps -j 4
farm fixed16 --share mps -j 16
farm timeslice --share timeslice
if [ "$NGPU" -ge 2 ]; then
	TOTAL=6 farm total --share mps --total 6
else
	skip "total over several GPUs" "$NGPU GPU here (run on nvidia-h200-x2)"
fi
gpu_finish
