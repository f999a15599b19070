#!/usr/bin/env bash
# foundation.sh: the foundation issue's check on a real GPU. Run as root from
# the repository root on the GPU machine (nvidia-smi, nvcc, python3 present):
#
#   OUT=/some/dir tests/gpu/foundation.sh
#
# 1. builds gpupack and gpupack-work (make, B=build unless $B says otherwise);
# 2. compares `gpupack devices --json` with `nvidia-smi --query-gpu` (UUID,
#    name, total memory in MiB exactly, compute mode, MIG mode current and
#    pending), and SMs and compute capability with what CUDA reports;
# 3. compares `gpupack devices --profiles --json` with data/mig-profiles.csv:
#    the measured rows exactly (H200), the documented rows' ids, names,
#    slices, SMs, counts and placements otherwise (memory differences are
#    reported, not failed);
# 4. runs every gpupack-work mode once and checks its one JSON line;
# 5. checks that NVML lists a running gpupack-work among the GPU's processes.
#
# It only reads card state: no MIG, compute-mode, clock or power change. The
# only processes it starts are gpupack-work runs, waited for or killed by pid.
# Writes $OUT/foundation.md (PASS/FAIL per check, raw JSON lines), keeps the
# outputs behind it in $OUT/foundation-files/, and exits 1 if any check failed.
set -u
# "python3 ... | record" must count its checks in this shell, not a subshell
shopt -s lastpipe
cd "$(dirname "$0")/../.." || exit 2
export GPU_COMMAND="OUT=${OUT:-./gpu-out} tests/gpu/foundation.sh $*"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. tests/gpu/lib.sh

B=${B:-build}
G="$PWD/$B/gpupack"
W="$PWD/$B/gpupack-work"
CSV=data/mig-profiles.csv
[ -f "$CSV" ] || CSV=../shared/data/mig-profiles.csv
export PATH="$PATH:/usr/local/cuda/bin"
unset GPUPACK_SIM GPUPACK_NVML_LIB CUDA_VISIBLE_DEVICES

gpu_init foundation
# the files behind the report: outputs of every command, the build log
F="$OUT/foundation-files"
mkdir -p "$F"

# record: turn "PASS x" / "FAIL x: why" / "INFO x" lines (from python) into checks
record() {
	local line
	while IFS= read -r line; do
		case $line in
		"PASS "*) pass "${line#PASS }" ;;
		"FAIL "*) fail "${line#FAIL }" ;;
		"SKIP "*) skip "${line#SKIP }" "" ;;
		"INFO "*) info "${line#INFO }" ;;
		*) [ -n "$line" ] && info "$line" ;;
		esac
	done
}

# ---- tools -------------------------------------------------------------------
for t in nvidia-smi nvcc python3 make cc; do
	if command -v "$t" >/dev/null 2>&1; then pass "tool $t found"; else fail "tool $t found" "not on PATH"; fi
done
command -v python3 >/dev/null 2>&1 || { gpu_finish; exit 1; }

# ---- 1. build ----------------------------------------------------------------
if make B="$B" >"$F/build.log" 2>&1; then
	pass "make B=$B builds"
else
	fail "make B=$B builds" "see build.log"
	raw "build.log (tail)" "$(tail -30 "$F/build.log")"
	gpu_finish
	exit 1
fi
[ -x "$G" ]; check $? "gpupack built"
[ -x "$W" ]; check $? "gpupack-work built (nvcc found)"

# ---- 2. devices against nvidia-smi -----------------------------------------------
run_cap() { # NAME FILE CMD...: run, keep stdout in FILE and stderr in FILE.err
	local name=$1 file=$2
	shift 2
	"$@" >"$file" 2>"$file.err"
	local rc=$?
	check "$rc" "$name exits 0" "exit $rc: $(head -c 300 "$file.err")"
	return "$rc"
}

run_cap "gpupack devices" "$F/devices.txt" "$G" devices
raw "gpupack devices" "$(cat "$F/devices.txt" "$F/devices.txt.err")"
run_cap "gpupack devices --json" "$F/devices.json" "$G" devices --json
raw "gpupack devices --json" "$(cat "$F/devices.json")"
run_cap "gpupack devices --profiles --json" "$F/profiles.json" "$G" devices --profiles --json
raw "gpupack devices --profiles --json" "$(cat "$F/profiles.json")"
Q=index,uuid,name,memory.total,memory.used,compute_mode,mig.mode.current,mig.mode.pending
nvidia-smi --query-gpu=$Q --format=csv,noheader,nounits >"$F/smi.csv" 2>&1
check $? "nvidia-smi --query-gpu answers"
raw "nvidia-smi --query-gpu=$Q" "$(cat "$F/smi.csv")"

python3 - "$F/devices.json" "$F/smi.csv" <<'PY' | record
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"FAIL devices --json is one JSON object: {e}")
    sys.exit(0)
print("PASS devices --json is one JSON object")
rows = [[c.strip() for c in l.split(",")] for l in open(sys.argv[2]) if l.strip()]
gpus = {g["index"]: g for g in d.get("gpus", [])}
if len(rows) == len(gpus):
    print(f"PASS GPU count: {len(rows)}")
else:
    print(f"FAIL GPU count: nvidia-smi {len(rows)}, gpupack {len(gpus)}")
def norm(s):
    s = s.strip().lower().replace("_", "-")
    return "unsupported" if s in ("[n/a]", "n/a", "[not supported]") else s
for r in rows:
    if len(r) < 8:
        print(f"FAIL nvidia-smi row has 8 fields: {r}")
        continue
    idx = int(r[0])
    g = gpus.get(idx)
    if g is None:
        print(f"FAIL GPU {idx} in devices --json: missing")
        continue
    def cmp(what, ours, theirs):
        if ours == theirs:
            print(f"PASS GPU {idx} {what}: {ours}")
        else:
            print(f"FAIL GPU {idx} {what}: gpupack {ours!r}, nvidia-smi {theirs!r}")
    cmp("uuid", g["uuid"], r[1])
    cmp("name", g["name"], r[2])
    cmp("memory total MiB", g["memory_total_bytes"] // (1 << 20), int(r[3]))
    cmp("compute mode", g["compute_mode"], norm(r[5]))
    cmp("MIG current", g["mig_current"], norm(r[6]))
    cmp("MIG pending", g["mig_pending"], norm(r[7]))
    used = g["memory_used_bytes"] // (1 << 20)
    res = g.get("memory_reserved_bytes", 0) // (1 << 20)
    print(f"INFO GPU {idx} memory used: gpupack {used} MiB (reserved {res} MiB), nvidia-smi {r[4]} MiB"
          f" (difference {used - int(r[4])} MiB)")
    print(f"INFO GPU {idx}: {g['sms']} SMs, cc {g['compute_capability']}, pci {g['pci_bus_id']}")
PY

UUID0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gpus"][0]["uuid"])' \
	"$F/devices.json" 2>/dev/null)
[ -n "$UUID0" ]; check $? "GPU 0 UUID known" "devices --json gave none"

# ---- 3. profiles against data/mig-profiles.csv ----------------------------------------
python3 - "$F/profiles.json" "$CSV" <<'PY' | record
import csv, json, sys
try:
    d = json.load(open(sys.argv[1]))
    g = d["gpus"][0]
except Exception as e:
    print(f"FAIL devices --profiles --json readable: {e}")
    sys.exit(0)
name = g["name"]
products = [("H200", "H200-141GB"), ("H100 80GB", "H100-80GB"), ("H100-SXM5-80GB", "H100-80GB"),
            ("A100-SXM4-40GB", "A100-40GB"), ("A100-PCIE-40GB", "A100-40GB"),
            ("A100-SXM4-80GB", "A100-80GB"), ("A100 80GB", "A100-80GB"), ("A30", "A30-24GB")]
product = next((p for k, p in products if k in name), None)
if g["mig_current"] == "unsupported":
    print(f"SKIP profiles: {name} has no MIG")
    sys.exit(0)
if product is None:
    print(f"SKIP profiles: no rows in the CSV for {name}")
    sys.exit(0)
rows = [r for r in csv.reader(l for l in open(sys.argv[2]) if not l.startswith("#"))]
head, rows = rows[0], [dict(zip(rows[0], r)) for r in rows[1:] if r and r[0] == product]
if not rows:
    print(f"SKIP profiles: no rows for {product}")
    sys.exit(0)
ours = {p["profile_index"]: p for p in g.get("profiles", [])}
print(f"INFO profiles compared with the {product} rows of {sys.argv[2]}")
for r in rows:
    idx = int(r["profile_index"])
    p = ours.get(idx)
    label = f"profile {r['name']} (index {idx})"
    if p is None:
        print(f"FAIL {label}: not reported by gpupack")
        continue
    measured = r["source"] == "measured"
    pl = " ".join(f"{x['start']}+{x['size']}" for x in p["placements"])
    checks = [("id", p["profile_id"], int(r["profile_id"])), ("name", p["name"], r["name"]),
              ("slices", p["slices"], int(r["slices"])), ("SMs", p["sms"], int(r["sms"])),
              ("max count", p["max_count"], int(r["max_count"])), ("placements", pl, r["placements"])]
    mem = p["memory_bytes"] // (1 << 20)
    if measured:
        checks.append(("memory MiB", mem, int(r["mem_mib"])))
    else:
        print(f"INFO {label}: memory {mem} MiB, CSV nominal {r['mem_mib']} MiB (difference {mem - int(r['mem_mib'])})")
    bad = [f"{w}: gpupack {a!r}, csv {b!r}" for w, a, b in checks if a != b]
    if bad:
        print(f"FAIL {label} ({r['source']}): " + "; ".join(bad))
    else:
        print(f"PASS {label} ({r['source']}) matches: id, name, slices, SMs, count, placements"
              + (", memory" if measured else ""))
extra = sorted(set(ours) - {int(r["profile_index"]) for r in rows})
for i in extra:
    p = ours[i]
    print(f"INFO profile index {i} not in the CSV: {p['name']} id {p['id']} slices {p['slices']}"
          f" {p['memory_bytes'] >> 20} MiB {p['sms']} SMs x{p['max_count']}")
PY

# ---- 4. gpupack-work, every mode once ---------------------------------------------
# work NAME EXPECT_RC ARGS...: run gpupack-work on GPU 0 (by UUID), check its JSON line
work() {
	local name=$1 want_rc=$2
	shift 2
	local file="$F/work-$name.json"
	CUDA_VISIBLE_DEVICES=$UUID0 timeout 300 "$W" "$@" >"$file" 2>"$file.err"
	local rc=$?
	raw "gpupack-work $* (exit $rc)" "$(cat "$file")$(sed 's/^/stderr: /' "$file.err")"
	if [ "$want_rc" = 0 ]; then
		check "$rc" "work $name: exit 0" "exit $rc"
	else
		[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]
		check $? "work $name: exits non-zero" "exit $rc"
	fi
	python3 - "$file" "$name" "$UUID0" "$want_rc" "${WORK_EXTRA:-}" <<'PY' | record
import json, sys
path, name, uuid, want_rc, extra = sys.argv[1:6]
lines = [l for l in open(path).read().splitlines() if l.strip()]
if len(lines) != 1:
    print(f"FAIL work {name}: exactly one line on stdout (got {len(lines)})")
    sys.exit(0)
try:
    j = json.loads(lines[0])
except Exception as e:
    print(f"FAIL work {name}: valid JSON: {e}")
    sys.exit(0)
print(f"PASS work {name}: one valid JSON line")
missing = [k for k in ("mode", "ok", "pid", "device", "uuid", "t_start", "t_end", "seconds") if k not in j]
print(f"FAIL work {name}: common keys missing: {missing}" if missing else f"PASS work {name}: common keys")
want_ok = want_rc == "0"
if j.get("ok") is want_ok:
    print(f"PASS work {name}: ok {str(want_ok).lower()}")
else:
    print(f"FAIL work {name}: ok is {j.get('ok')!r}, want {want_ok}; error {j.get('error')!r}")
def extras():
    for cond in filter(None, extra.split(";")):
        try:
            good = eval(cond, {}, dict(j))
        except Exception as e:
            good, cond = False, f"{cond} ({e})"
        print(f"PASS work {name}: {cond}" if good else f"FAIL work {name}: {cond} (line: {lines[0][:300]})")
if not want_ok:
    e = j.get("error") or ""
    print(f"PASS work {name}: error says {e!r}" if e else f"FAIL work {name}: no error text")
    extras()
    sys.exit(0)
if j.get("uuid") == uuid:
    print(f"PASS work {name}: uuid {uuid}")
else:
    print(f"FAIL work {name}: uuid {j.get('uuid')!r}, devices says {uuid!r}")
if "checksum_ok" in j:
    print(f"PASS work {name}: checksum_ok (max_rel_err {j.get('max_rel_err')})" if j["checksum_ok"] is True
          else f"FAIL work {name}: checksum_ok {j['checksum_ok']!r} (max_rel_err {j.get('max_rel_err')})")
elif j.get("mode") == "matmul":
    print(f"FAIL work {name}: matmul without checksum_ok")
extras()
print(f"INFO work {name}: {j.get('seconds')} s" + (f", {j['tflops']} TFLOP/s" if 'tflops' in j else ""))
PY
}

if [ -x "$W" ] && [ -n "$UUID0" ]; then
	SMS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gpus"][0]["sms"])' "$F/devices.json")
	CC=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gpus"][0]["compute_capability"])' \
		"$F/devices.json")
	N3=$((1024 * 1024 * 1024))
	WORK_EXTRA="sms == $SMS;cc == '$CC';mem_total > 0;mem_free > 0" work info 0 info
	WORK_EXTRA="sms_attr == $SMS;sms_seen == sms_attr" work smcount 0 smcount
	WORK_EXTRA="flops == 2 * $N3 * 5;n == 1024;iters == 5" work matmul 0 matmul --n 1024 --iters 5
	WORK_EXTRA="flops == 2 * $N3 * 5 * 4;streams == 4" work matmul-streams 0 matmul --n 1024 --iters 5 --streams 4
	WORK_EXTRA="flops == 2 * $N3 * 5 * 4;batched == 4" work matmul-batched 0 matmul --n 1024 --iters 5 --batched 4
	AT=$(python3 -c 'import time; print("%.3f" % (time.time() + 2))')
	WORK_EXTRA="t_start >= $AT" work start-at 0 matmul --n 1024 --iters 5 --start-at "$AT"
	WORK_EXTRA="seconds >= 4 * 0.005" work cpu-ms 0 matmul --n 1024 --iters 5 --cpu-ms 5
	WORK_EXTRA="ms == 200;seconds >= 0.19" work spin 0 spin --ms 200
	WORK_EXTRA="alloc_ok is True;mib == 256" work alloc 0 alloc --mib 256
	WORK_EXTRA="'illegal' in error.lower()" work fault 1 fault
else
	skip "gpupack-work modes" "gpupack-work not built or no GPU UUID"
fi

# ---- 5. NVML sees a running CUDA process --------------------------------------------
if [ -x "$W" ] && [ -n "$UUID0" ]; then
	CUDA_VISIBLE_DEVICES=$UUID0 bg "$W" spin --ms 4000 >"$F/work-bg.json" 2>&1
	sleep 2
	"$G" devices --json >"$F/devices-busy.json" 2>&1
	raw "gpupack devices --json while gpupack-work spin runs (pid $BG_PID)" "$(cat "$F/devices-busy.json")"
	python3 - "$F/devices-busy.json" "$BG_PID" <<'PY' | record
import json, sys
d = json.load(open(sys.argv[1]))
pid = int(sys.argv[2])
procs = [p for g in d["gpus"] for p in g.get("processes", [])]
mine = [p for p in procs if p["pid"] == pid]
if mine:
    p = mine[0]
    print(f"PASS NVML lists the running gpupack-work (pid {pid}, name {p['name']!r}, {p['memory_used_bytes'] >> 20} MiB)")
    print("PASS process name from /proc" if p["name"] == "gpupack-work" else f"FAIL process name: {p['name']!r}")
else:
    print(f"FAIL NVML lists the running gpupack-work (pid {pid}): processes {procs}")
PY
	wait "$BG_PID"
	check $? "background spin finished cleanly"
fi

gpu_finish
