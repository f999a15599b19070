#!/bin/bash
# topology.sh: is the shipped simulated machine for this GPU faithful to the real card?
# Compares `gpupack devices --json --profiles` on the driver (NVML) with the same command
# on the matching topology file (topologies/h200-141gb.topo for an H200, h100-80gb.topo for
# an H100 80GB): name, memory total, SMs, compute capability, MIG support, and the whole
# MIG profile table (index, id, name, slices, SMs, count, placements, memory).
# Read only: changes nothing on the card. Run from the repository root:
#   make && bash tests/gpu/topology.sh        (report: $OUT/topology.md, default ./gpu-out)
set -u
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=tests/gpu/lib.sh
. tests/gpu/lib.sh
GPU_COMMAND="bash tests/gpu/topology.sh"
gpu_init topology

G="${GPUPACK:-$PWD/build/gpupack}"
if [ ! -x "$G" ]; then
	make >/dev/null 2>&1
fi
[ -x "$G" ]
check $? "gpupack built" "$G missing"
"$G" devices --json --profiles >"$OUT/real.json" 2>"$OUT/real.err"
check $? "devices --json --profiles on the driver" "$(cat "$OUT/real.err")"
raw "real devices --json --profiles" "$(cat "$OUT/real.json" "$OUT/real.err")"

name=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gpus"][0]["name"])' \
	"$OUT/real.json" 2>/dev/null)
case $name in
*H200*) topo=topologies/h200-141gb.topo ;;
*H100*80GB*) topo=topologies/h100-80gb.topo ;;
*A100*80GB*) topo=topologies/a100-80gb.topo ;;
*A100*40GB*) topo=topologies/a100-40gb.topo ;;
*A30*) topo=topologies/a30-24gb.topo ;;
*) topo="" ;;
esac
if [ -z "$topo" ]; then
	skip "shipped topology for '$name'" "no topology ships for this product"
	gpu_finish
	exit $?
fi
info "comparing GPU 0 ($name) with $topo"
"$G" --sim "$topo" devices --json --profiles >"$OUT/sim.json" 2>"$OUT/sim.err"
check $? "devices --json --profiles on $topo" "$(cat "$OUT/sim.err")"

python3 - "$OUT/real.json" "$OUT/sim.json" >"$OUT/compare.txt" 2>&1 <<'PY'
import json, sys
real = json.load(open(sys.argv[1]))["gpus"][0]
sim = json.load(open(sys.argv[2]))["gpus"][0]
def cmp(what, a, b):
    print(("PASS " if a == b else "FAIL ") + f"{what}: card {a!r}, topology {b!r}")
for k in ("name", "sms", "compute_capability"):
    cmp(k, real.get(k), sim.get(k))
# nvidia-smi shows whole MiB; the topology carries that figure
cmp("memory total (MiB)", real.get("memory_total_bytes", 0) // 1048576, sim.get("memory_total_bytes", 0) // 1048576)
cmp("MIG supported", real.get("mig_current") != "unsupported", sim.get("mig_current") != "unsupported")
def table(g, with_mem):
    rows = {}
    for p in g.get("profiles", []):
        pl = " ".join(f"{x['start']}+{x['size']}" for x in p["placements"])
        row = (p["profile_index"], p["profile_id"], p["slices"], p["sms"], p["max_count"], pl)
        if with_mem:
            row += (p["memory_bytes"],)
        rows[p["name"]] = row
    return rows
r, s = table(real, True), table(sim, True)
cmp("profile names", sorted(r), sorted(s))
for n in sorted(set(r) & set(s)):
    cmp(f"profile {n} (index, id, slices, sms, max, placements, memory)", r[n], s[n])
PY
[ -s "$OUT/compare.txt" ]
check $? "comparison ran" "python3 gave no output"
while IFS= read -r line; do
	case $line in
	PASS\ *) pass "${line#PASS }" ;;
	FAIL\ *) fail "${line#FAIL }" ;;
	*) fail "comparison" "$line" ;;
	esac
done <"$OUT/compare.txt"
raw "sim devices --json --profiles" "$(cat "$OUT/sim.json")"
gpu_finish
