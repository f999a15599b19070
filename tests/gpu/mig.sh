#!/bin/bash
# mig.sh: `gpupack mig` against the real driver, read only. Checks that `mig profiles
# --json` matches data/mig-profiles.csv (every field of the measured H200 rows; for an
# H100 80GB the documented names, slices, SMs, counts and placements), that `mig plan`
# runs against the device, and that `mig apply --dry-run` and `mig clear --dry-run`
# print their operations and change nothing: MIG mode (current and pending) and the
# GPU/compute instance lists are compared before and after.
# NEVER changes MIG mode or geometry: no apply or clear without --dry-run here.
# Run as root from the repository root:
#   make && bash tests/gpu/mig.sh        (report: $OUT/mig.md, default ./gpu-out)
set -u
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=tests/gpu/lib.sh
. tests/gpu/lib.sh
GPU_COMMAND="bash tests/gpu/mig.sh"
gpu_init mig

G="${GPUPACK:-$PWD/build/gpupack}"
if [ ! -x "$G" ]; then
	make >/dev/null 2>&1
fi
[ -x "$G" ]
check $? "gpupack built" "$G missing"
command -v python3 >/dev/null 2>&1
check $? "python3 present (to read JSON)" "python3 missing"

# What must not change: MIG mode and the instance lists, as nvidia-smi and gpupack see them.
machine_state() {
	nvidia-smi --query-gpu=index,uuid,mig.mode.current,mig.mode.pending --format=csv,noheader 2>&1
	echo "--- nvidia-smi mig -lgi"
	nvidia-smi mig -lgi 2>&1
	echo "--- nvidia-smi mig -lci"
	nvidia-smi mig -lci 2>&1
	echo "--- gpupack devices --json: MIG mode and instances"
	"$G" devices --json 2>&1 | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except Exception as e:
    print("unreadable:", e); sys.exit(0)
for g in d["gpus"]:
    print(g["index"], g.get("mig_current"), g.get("mig_pending"),
          [(i["id"], i["profile"], i["placement"]["start"], i["placement"]["size"],
            [c["id"] for c in i.get("compute_instances", [])]) for i in g.get("gpu_instances", [])])'
}
before=$(machine_state)
raw "machine state before" "$before"

# --- profiles ---
"$G" mig profiles --gpu 0 --json >"$OUT/mig-profiles.json" 2>"$OUT/mig-profiles.err"
check $? "mig profiles --gpu 0 --json exits 0" "$(cat "$OUT/mig-profiles.err")"
raw "mig profiles --json" "$(cat "$OUT/mig-profiles.json" "$OUT/mig-profiles.err")"
"$G" mig profiles --gpu 0 >"$OUT/mig-profiles.txt" 2>&1
raw "mig profiles (table)" "$(cat "$OUT/mig-profiles.txt")"

python3 - "$OUT/mig-profiles.json" data/mig-profiles.csv >"$OUT/mig-compare.txt" 2>&1 <<'PY'
import csv, json, sys
gpu = json.load(open(sys.argv[1]))["gpus"][0]
name = gpu["name"]
if "H200" in name:
    product, fields = "H200-141GB", ["slices", "memory", "sms", "max_count", "placements", "profile_id", "profile_index"]
elif "H100" in name and "80GB" in name:
    product, fields = "H100-80GB", ["slices", "sms", "max_count", "placements", "profile_id", "profile_index"]
else:
    print(f"SKIP no CSV rows to compare with for '{name}'")
    sys.exit(0)
print(f"INFO GPU 0 is '{name}': comparing with the {product} rows ({', '.join(fields)})")
rows = [r for r in csv.reader(l for l in open(sys.argv[2]) if not l.startswith("#"))
        if r and r[0] == product]
want = {}
for r in rows:
    want[r[3]] = {"profile_index": int(r[1]), "profile_id": int(r[2]), "slices": int(r[4]),
                  "memory": int(r[5]) * 1048576, "sms": int(r[6]), "max_count": int(r[7]),
                  "placements": r[8].split()}
got = {}
for p in gpu["profiles"]:
    got[p["name"]] = {"profile_index": p["profile_index"], "profile_id": p["profile_id"],
                      "slices": p["slices"], "memory": p["memory_bytes"], "sms": p["sms"],
                      "max_count": p["max_count"],
                      "placements": [f'{x["start"]}+{x["size"]}' for x in p["placements"]]}
names_ok = sorted(got) == sorted(want)
print(("PASS" if names_ok else "FAIL") + f" profile names: card {sorted(got)}, CSV {sorted(want)}")
for n in sorted(want):
    if n not in got:
        continue
    for f in fields:
        a, b = got[n][f], want[n][f]
        print(("PASS" if a == b else "FAIL") + f" {n} {f}: card {a!r}, CSV {b!r}")
PY
while IFS= read -r line; do
	case $line in
	PASS*) pass "profiles: ${line#PASS }" ;;
	FAIL*) fail "profiles: ${line#FAIL }" ;;
	SKIP*) skip "profiles vs CSV" "${line#SKIP }" ;;
	INFO*) info "${line#INFO }" ;;
	*) fail "profiles: compare script" "$line" ;;
	esac
done <"$OUT/mig-compare.txt"

# --- plan on the device: two of the 3-slice profile, and memory requests ---
p3=$(python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["gpus"][0]["profiles"]:
    if p["slices"] == 3 and "+" not in p["name"]:
        print(p["name"]); break' "$OUT/mig-profiles.json" 2>/dev/null)
if [ -z "$p3" ]; then
	skip "mig plan" "no 3-slice profile on GPU 0"
	gpu_finish
	exit $?
fi
info "planning with 2x$p3"
t0=$(date +%s%N)
"$G" mig plan --gpu 0 --json --want "2x$p3" >"$OUT/mig-plan.json" 2>"$OUT/mig-plan.err"
rc=$?
t1=$(date +%s%N)
check "$rc" "mig plan --gpu 0 --want 2x$p3 exits 0" "$(cat "$OUT/mig-plan.err")"
info "mig plan wall clock (process, real driver): $(( (t1 - t0) / 1000000 )) ms"
raw "mig plan --json --want 2x$p3" "$(cat "$OUT/mig-plan.json" "$OUT/mig-plan.err")"
sat=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["satisfied"], d["requested"], d["optimal"])' \
	"$OUT/mig-plan.json" 2>/dev/null)
info "plan: satisfied requested optimal = $sat"
case $before in
*Disabled*|*disabled*)
	[ "$sat" = "2 2 True" ]
	check $? "with MIG off (no instances) both 2x$p3 are satisfied" "got $sat" ;;
*)
	info "MIG is on here: the plan depends on the instances present" ;;
esac
"$G" mig plan --gpu 0 --want "2x$p3" "4x8G" "1x1000G" >"$OUT/mig-plan.txt" 2>&1
check $? "mig plan (table) with an over-capacity request exits 0"
raw "mig plan --want 2x$p3 4x8G 1x1000G" "$(cat "$OUT/mig-plan.txt")"
grep -q "unsatisfied:" "$OUT/mig-plan.txt"
check $? "the 1000G request is listed as unsatisfied"

# --- dry runs: operations printed, nothing changed ---
"$G" mig apply --gpu 0 --dry-run --want "2x$p3" >"$OUT/mig-dry.txt" 2>&1
check $? "mig apply --dry-run --want 2x$p3 exits 0" "$(cat "$OUT/mig-dry.txt")"
raw "mig apply --dry-run --want 2x$p3" "$(cat "$OUT/mig-dry.txt")"
grep -q "^create gpu-instance $p3 at [0-9]*+[0-9]* on GPU 0 (GPU-" "$OUT/mig-dry.txt"
check $? "dry-run prints 'create gpu-instance $p3 at S+N on GPU 0 (GPU-...)'"
"$G" mig apply --gpu 0 --dry-run --enable-mig --want "2x$p3" >"$OUT/mig-dry2.txt" 2>&1
check $? "mig apply --dry-run --enable-mig exits 0" "$(cat "$OUT/mig-dry2.txt")"
raw "mig apply --dry-run --enable-mig --want 2x$p3" "$(cat "$OUT/mig-dry2.txt")"
"$G" mig plan --gpu 0 --want "2x$p3" --save "$OUT/mig.plan" >/dev/null 2>&1
check $? "mig plan --save writes a plan file"
"$G" mig apply --dry-run "$OUT/mig.plan" >"$OUT/mig-dry3.txt" 2>&1
check $? "mig apply --dry-run PLAN_FILE exits 0" "$(cat "$OUT/mig-dry3.txt")"
raw "plan file" "$(cat "$OUT/mig.plan")"
# --- the exact planner (issue 14) on the card's own profiles: a mix with shared jobs ---
printf '# count memory|profile [share]\n1 %s\n4 8G\n6 2G 0.05\n' "$p3" >"$OUT/mig-requests.txt"
t0=$(date +%s%N)
"$G" mig plan --gpu 0 --json --requests "$OUT/mig-requests.txt" >"$OUT/mig-plan2.json" 2>"$OUT/mig-plan2.err"
rc=$?
t1=$(date +%s%N)
check "$rc" "mig plan --requests (1x$p3, 4x8G, 6x2G share 0.05) exits 0" "$(cat "$OUT/mig-plan2.err")"
info "exact planner wall clock (process, real driver): $(( (t1 - t0) / 1000000 )) ms"
raw "mig plan --json --requests" "$(cat "$OUT/mig-plan2.json" "$OUT/mig-plan2.err")"
python3 - "$OUT/mig-plan2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = d["optimal"] is True and d["bound_satisfied"] == d["satisfied"] and d["satisfied"] <= d["requested"]
shared = [u for u in d["units"] if u.get("satisfied") and u.get("mps_memory_limit_bytes", 0) > 0]
print(("PASS" if ok else "FAIL") + f" exact plan: optimal={d['optimal']} satisfied={d['satisfied']}/{d['requested']}"
      f" bound={d['bound_satisfied']} waste={d['waste_bytes']}")
print(f"INFO shared jobs with MPS caps: {len(shared)}")
sys.exit(0 if ok else 1)
PY
check $? "the plan is proven optimal (bound equals what it satisfies)"
"$G" mig apply --gpu 0 --dry-run --requests "$OUT/mig-requests.txt" >"$OUT/mig-dry4.txt" 2>&1
check $? "mig apply --dry-run --requests exits 0" "$(cat "$OUT/mig-dry4.txt")"
raw "mig apply --dry-run --requests" "$(cat "$OUT/mig-dry4.txt")"
# --- a mix planned, proven optimal with every unit placed (fits) or some left out (over), and dry-run ---
# usage: proven_mix NAME fits|over "WHAT" REQUESTS-LINES
proven_mix() {
	local name=$1 kind=$2 what=$3 req="$OUT/mig-requests-$1.txt"
	printf '# count memory|profile [share]\n%s\n' "$4" >"$req"
	"$G" mig plan --gpu 0 --json --requests "$req" >"$OUT/mig-plan-$name.json" 2>"$OUT/mig-plan-$name.err"
	check $? "mig plan --requests ($what) exits 0" "$(cat "$OUT/mig-plan-$name.err")"
	raw "mig plan --json --requests ($what)" "$(cat "$OUT/mig-plan-$name.json" "$OUT/mig-plan-$name.err")"
	python3 - "$OUT/mig-plan-$name.json" "$kind" "$what" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
placed = d["satisfied"] == d["requested"] if sys.argv[2] == "fits" else d["satisfied"] < d["requested"]
ok = d["optimal"] is True and placed and d["gap_level"] == 0
print(("PASS" if ok else "FAIL") + f" {sys.argv[3]}: optimal={d['optimal']} satisfied={d['satisfied']}/{d['requested']}"
      f" waste={d['waste_bytes']} sms={d['sms']} ops={d['operation_count']}")
sys.exit(0 if ok else 1)
PY
	check $? "$what: $([ "$kind" = fits ] && echo "every unit placed" || echo "some units left out"), proven optimal"
	"$G" mig apply --gpu 0 --dry-run --requests "$req" >"$OUT/mig-dry-$name.txt" 2>&1
	check $? "mig apply --dry-run --requests ($what) exits 0" "$(cat "$OUT/mig-dry-$name.txt")"
}
# every unit placed (where the bags, mig_bag.c, may prove it)
proven_mix fit fits "a mix that fits: 1x$p3, 2x8G, 4x2G share 0.05" "$(printf '1 %s\n2 8G\n4 2G 0.05\n' "$p3")"
# some units left out (the bags beneath each drop vector, mig_bagdrop.c, may prove it)
proven_mix over over "a mix that does not fit: 3x$p3, 4x8G, 6x2G share 0.05, 2x8G share 0.3" \
	"$(printf '3 %s\n4 8G\n6 2G 0.05\n2 8G 0.3\n' "$p3")"
# --- --effort N (more search work) on the card: the same optimum, apply --dry-run with it ---
"$G" mig plan --gpu 0 --json --effort 5 --requests "$OUT/mig-requests.txt" >"$OUT/mig-plan3.json" 2>"$OUT/mig-plan3.err"
check $? "mig plan --effort 5 --requests exits 0" "$(cat "$OUT/mig-plan3.err")"
raw "mig plan --json --effort 5 --requests" "$(cat "$OUT/mig-plan3.json" "$OUT/mig-plan3.err")"
python3 - "$OUT/mig-plan2.json" "$OUT/mig-plan3.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
keys = ("optimal", "satisfied", "waste_bytes", "operation_count")
ok = all(a.get(k) == b.get(k) for k in keys)
print(("PASS" if ok else "FAIL") + " --effort 5 gives the same proven optimum: "
      + ", ".join(f"{k} {a.get(k)} / {b.get(k)}" for k in keys))
sys.exit(0 if ok else 1)
PY
check $? "the plan at --effort 5 scores what the default's does (both proven)"
"$G" mig apply --gpu 0 --dry-run --effort 5 --requests "$OUT/mig-requests.txt" >"$OUT/mig-dry5.txt" 2>&1
check $? "mig apply --dry-run --effort 5 --requests exits 0" "$(cat "$OUT/mig-dry5.txt")"
raw "mig apply --dry-run --effort 5 --requests" "$(cat "$OUT/mig-dry5.txt")"
"$G" mig plan --gpu 0 --effort 0 --requests "$OUT/mig-requests.txt" >"$OUT/mig-effort0.txt" 2>&1
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$OUT/mig-effort0.txt")" = 1 ]
check $? "mig plan --effort 0 exits 2 with one line" "rc $rc: $(cat "$OUT/mig-effort0.txt")"
"$G" mig clear --gpu 0 --dry-run >"$OUT/mig-clear.txt" 2>&1
check $? "mig clear --dry-run exits 0" "$(cat "$OUT/mig-clear.txt")"
raw "mig clear --dry-run" "$(cat "$OUT/mig-clear.txt")"

after=$(machine_state)
raw "machine state after" "$after"
[ "$before" = "$after" ]
check $? "MIG mode and instances unchanged (nvidia-smi and gpupack, before and after)" \
	"$(diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") | head -20)"

gpu_finish
