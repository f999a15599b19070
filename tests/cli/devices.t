#!/bin/sh
# devices.t: `gpupack devices` against every shipped topology, field by field.
# Expected values are read from the topology files (and data/mig-profiles.csv) by awk here,
# never by asking gpupack; `devices --json` is flattened by jq and must hold every one.
# shellcheck source=tests/lib.sh disable=SC2154,SC2013 # rc, out, err: set by run() in lib.sh
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"
CSV="$GPUPACK_SRC/data/mig-profiles.csv"

# GPUPACK may be "tests/valgrind-run .../gpupack": split it on purpose.
gp() {
	# shellcheck disable=SC2086
	$GPUPACK "$@"
}

# topology FILE -> "path=value" lines as devices --json must show them
expect() {
	awk '
	function bytes(s,   n, u) {
		n = s; sub(/[A-Za-z]+$/, "", n); u = substr(s, length(n) + 1)
		u = toupper(substr(u, 1, 1))
		if (u == "K") n *= 1024; else if (u == "M") n *= 1048576
		else if (u == "G") n *= 1073741824; else if (u == "T") n *= 1099511627776
		return sprintf("%.0f", n)
	}
	function attr(key,   i, kv) {
		for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) return substr($i, length(key) + 2) }
		return ""
	}
	{ sub(/(^|[ \t])#.*/, "") }
	NF == 0 { next }
	$1 == "driver" { print "driver_version=" $2 }
	$1 == "cuda" { print "cuda_version=" $2 }
	$1 == "gpu" { g = "gpus." $2; ngi = -1; np = -1; print g ".index=" $2 }
	$1 == "uuid" { print g ".uuid=" $2 }
	$1 == "name" { v = $0; sub(/^[ \t]*name[ \t]+/, "", v); sub(/[ \t]+$/, "", v); print g ".name=" v }
	$1 == "pci" { print g ".pci_bus_id=" $2 }
	$1 == "memory" {
		t = bytes(attr("total")); u = attr("used") == "" ? 0 : bytes(attr("used"))
		r = attr("reserved") == "" ? 0 : bytes(attr("reserved"))
		print g ".memory_total_bytes=" t; print g ".memory_used_bytes=" u
		print g ".memory_reserved_bytes=" r; printf "%s.memory_free_bytes=%.0f\n", g, t - u - r
	}
	$1 == "sms" { print g ".sms=" $2 }
	$1 == "compute-capability" { print g ".compute_capability=" $2 }
	$1 == "compute-mode" { print g ".compute_mode=" $2 }
	$1 == "mig" && $2 == "unsupported" { print g ".mig_current=unsupported"; print g ".mig_pending=unsupported" }
	$1 == "mig" && $2 != "unsupported" { print g ".mig_current=" attr("current"); print g ".mig_pending=" attr("pending") }
	$1 == "profile" { psms[g, attr("name")] = attr("sms"); pmem[g, attr("name")] = bytes(attr("memory")) }
	$1 == "gi" {
		i = g ".gpu_instances." (++ngi); prof = attr("profile"); split(attr("placement"), pl, "+")
		print i ".id=" attr("id"); print i ".profile=" prof
		print i ".placement.start=" pl[1]; print i ".placement.size=" pl[2]
		print i ".memory_used_bytes=" (attr("used") == "" ? 0 : bytes(attr("used")))
		print i ".memory_total_bytes=" pmem[g, prof]; print i ".sms=" psms[g, prof]; nci = -1
	}
	$1 == "ci" { c = i ".compute_instances." (++nci); print c ".id=" attr("id"); print c ".uuid=" attr("uuid")
		print c ".sms=" psms[g, prof] }
	$1 == "process" { p = g ".processes." (++np); print p ".pid=" attr("pid"); print p ".name=" attr("name")
		print p ".memory_used_bytes=" bytes(attr("memory"))
		if (attr("gi") != "") { print p ".gpu_instance=" attr("gi"); print p ".compute_instance=" attr("ci") }
		else { print p ".gpu_instance=null"; print p ".compute_instance=null" } }
	' "$1"
}

# devices --json on stdin -> "path=value" for every leaf
flatten() {
	jq -r 'paths(type != "object" and type != "array") as $p | "\($p | map(tostring) | join("."))=\(getpath($p) | if . == null then "null" else tostring end)"'
}

# the product of data/mig-profiles.csv each shipped machine uses
product() {
	case $1 in
	h200*) echo H200-141GB ;; h100*) echo H100-80GB ;; a100-40gb*) echo A100-40GB ;;
	a100-80gb*) echo A100-80GB ;; a30*) echo A30-24GB ;;
	esac
}

csv_rows() {
	awk -F, -v p="$1" '!/^#/ && $1 == p {
		printf "%s,%s,%s,%s,%.0f,%s,%s,%s\n", $2, $3, $4, $5, $6 * 1048576, $7, $8, $9 }' "$CSV" | sort
}

# "GPU:index,id,name,..." for every profile of every GPU, in one jq run
json_rows() {
	jq -r '.gpus[] | .index as $g | .profiles[] |
		"\($g):\(.profile_index),\(.profile_id),\(.name),\(.slices),\(.memory_bytes),\(.sms),\(.max_count),\(
		[.placements[] | "\(.start)+\(.size)"] | join(" "))"' "$1"
}

# count LINES-REGEX: how many flattened lines of $T/got match
count() { grep -Ec -- "$1" "$T/got"; }

# --- every shipped topology, field by field ---
n_topo=0
for f in "$TOPO"/*.topo; do
	name=$(basename "$f")
	n_topo=$((n_topo + 1))
	run gp --sim "$f" devices --json --profiles
	ok "$rc" "$name: devices --json exits 0"
	printf '%s\n' "$out" >"$T/json"
	printf '%s\n' "$out" | flatten | sort >"$T/got"
	expect "$f" | sort >"$T/want"
	missing=$(comm -23 "$T/want" "$T/got")
	is "$missing" "" "$name: every field of the topology is in the JSON ($(wc -l <"$T/want") fields)"
	is "$(grep '^backend=' "$T/got")" "backend=sim:$f" "$name: backend names the file"
	ngpu=$(grep -c '^gpu ' "$f")
	is "$(count '^gpus\.[0-9]+\.index=')" "$ngpu" "$name: $ngpu GPUs"
	is "$(count '^gpus\.[0-9]+\.gpu_instances\.[0-9]+\.id=')" "$(grep -c '^ *gi ' "$f")" \
		"$name: GPU instance count"
	is "$(count '^gpus\.[0-9]+\.processes\.[0-9]+\.pid=')" "$(grep -c '^ *process ' "$f")" \
		"$name: process count"
	# --profiles against the CSV, for every GPU of the machine
	prod=$(product "$name")
	csv_rows "$prod" >"$T/csv"
	json_rows "$T/json" >"$T/allprof"
	bad=0
	g=0
	while [ "$g" -lt "$ngpu" ]; do
		sed -n "s/^$g://p" "$T/allprof" | sort >"$T/prof"
		cmp -s "$T/csv" "$T/prof" || { bad=1; diff "$T/csv" "$T/prof" | sed 's/^/# /' | head -5; }
		g=$((g + 1))
	done
	ok "$bad" "$name: --profiles of each GPU equal the $prod rows of mig-profiles.csv"
	# the human table: the header and one row per GPU with its values
	run gp --sim "$f" devices
	ok "$rc" "$name: devices (table) exits 0"
	like "$(printf '%s\n' "$out" | head -1)" \
		"^driver $(awk '$1=="driver"{print $2}' "$f"), CUDA $(awk '$1=="cuda"{print $2}' "$f") " \
		"$name: table header has driver and CUDA versions"
	bad=0
	for u in $(awk '$1 == "uuid" {print $2}' "$f"); do
		row=$(printf '%s\n' "$out" | grep -F -- " $u ") || { bad=1; continue; }
		sms=$(awk -v u="$u" '$1=="uuid"{x=($2==u)} x && $1=="sms"{print $2; exit}' "$f")
		printf '%s\n' "$row" | grep -Eq " $sms +[0-9]+\.[0-9] +default +(enabled|disabled)" || bad=1
	done
	for u in $(awk '$1 == "ci" {for (i = 2; i <= NF; i++) if ($i ~ /^uuid=/) print substr($i, 6)}' "$f"); do
		printf '%s\n' "$out" | grep -q -- "$u\$" || bad=1
	done
	ok "$bad" "$name: table has a row per GPU and per MIG device"
	printf '%s\n' "$out" | grep -q '^MPS daemons: none$'
	ok $? "$name: MPS section (no daemons)"
done
ok "$([ "$n_topo" -ge 9 ] && echo 0 || echo 1)" "all $n_topo shipped topologies checked"

# --- the shipped files are what gen.sh writes from the CSV ---
"$GPUPACK_SRC/topologies/gen.sh" "$T/gen" >/dev/null 2>&1
bad=0
for f in "$TOPO"/*.topo; do
	cmp -s "$f" "$T/gen/$(basename "$f")" || { bad=1; diag "$(basename "$f") differs from gen.sh output"; }
done
ok "$bad" "shipped topologies equal topologies/gen.sh output (profile tables from the CSV)"

# --- values the JSON must carry exactly (the real cards as nvidia-smi shows them) ---
run gp --sim "$TOPO/h200-141gb.topo" devices --json
is "$(printf '%s' "$out" | jq '.gpus[0].memory_total_bytes / 1048576')" "143771" "H200: 143771 MiB"
is "$(printf '%s' "$out" | jq '.gpus[0].sms')" "132" "H200: 132 SMs"
is "$(printf '%s' "$out" | jq -r '.gpus[0] | has("profiles")')" "false" "no profiles without --profiles"
is "$(printf '%s' "$out" | jq -r '.mps_daemons | length')" "0" "mps_daemons is an empty list"

# --- --gpu ---
x8="$TOPO/h100-80gb-x8.topo"
run gp --sim "$x8" devices --json --gpu 3
is "$(printf '%s' "$out" | jq -c '[.gpus[].index]')" "[3]" "--gpu 3 lists GPU 3 alone"
u5=$(awk '$1=="gpu"{g=$2} $1=="uuid" && g==5 {print $2}' "$x8")
run gp --sim "$x8" devices --json --gpu "1,$u5"
is "$(printf '%s' "$out" | jq -c '[.gpus[].index]')" "[1,5]" "--gpu by index and UUID"
mig="$TOPO/h100-80gb-mig-busy.topo"
m=$(awk '$1=="ci" && $2=="gi=9" {sub(/uuid=/, "", $4); print $4}' "$mig")
run gp --sim "$mig" devices --json --gpu "$m"
is "$(printf '%s' "$out" | jq -c '[.gpus[0].gpu_instances[] | [.id, .compute_instances[].uuid]]')" \
	"[[9,\"$m\"]]" "--gpu MIG-UUID lists that MIG device alone"
is "$(printf '%s' "$out" | jq -c '[.gpus[0].processes[].pid]')" "[4243]" "... and only its processes"
run gp --sim "$x8" devices --gpu 8
is "$rc" 2 "--gpu 8 on an 8-GPU machine: exit 2"
one_line "$err" "--gpu 8: one line"
like "$err" "no such GPU" "--gpu 8: says so"
run gp --sim "$x8" devices --gpu 0,0
is "$rc" 2 "--gpu 0,0: exit 2"
one_line "$err" "--gpu 0,0: one line"
run gp --sim "$x8" devices --gpu MIG-00000000-0000-0000-0000-000000000000
is "$rc" 2 "--gpu unknown MIG UUID: exit 2"
run gp --sim "$x8" devices --gpu
is "$rc" 2 "--gpu without a value: exit 2"
one_line "$err" "--gpu without a value: one line"

# --- bad input ---
run gp --sim "$x8" devices --bogus
is "$rc" 2 "unknown flag: exit 2"
one_line "$err" "unknown flag: one line"
like "$err" "unknown option '--bogus'" "unknown flag named"
run gp --sim "$x8" devices extra
is "$rc" 2 "stray argument: exit 2"
run gp --sim "$T/nope.topo" devices
is "$rc" 2 "missing topology: exit 2"
one_line "$err" "missing topology: one line"
like "$err" "nope.topo" "missing topology: names the file"

# one broken line in a copy of a real topology: the error names file:line
break_at() { # FILE LINE TEXT: replace line LINE of FILE by TEXT into $T/bad.topo
	awk -v n="$2" -v t="$3" 'NR == n { print t; next } { print }' "$1" >"$T/bad.topo"
}
check_bad() { # NAME LINE REGEX
	run gp --sim "$T/bad.topo" devices --json
	is "$rc" 2 "$1: exit 2"
	one_line "$err" "$1: one line"
	like "$err" "$T/bad.topo:$2: .*$3" "$1: names $T/bad.topo:$2"
	is "$out" "" "$1: nothing on stdout"
}
base="$TOPO/h100-80gb-mig.topo"
ln_of() { grep -n -- "$2" "$1" | head -1 | cut -d: -f1; }
l=$(ln_of "$base" '^  sms ')
break_at "$base" "$l" "  smz 132"; check_bad "unknown key" "$l" "unknown keyword 'smz'"
break_at "$base" "$l" "  sms 13x"; check_bad "bad number" "$l" "'13x' is not a whole number"
l=$(ln_of "$base" '^  memory ')
break_at "$base" "$l" "  memory total=81559"; check_bad "size without unit" "$l" "no unit"
l=$(ln_of "$base" 'gi id=3 ')
break_at "$base" "$l" "  gi id=3 profile=2g.20gb placement=4+2"
check_bad "placement overlap" "$l" "overlaps GPU instance"
break_at "$base" "$l" "  gi id=3 profile=2g.20gb placement=1+2"
check_bad "instance not matching a profile placement" "$l" "not one of profile 2g.20gb"
break_at "$base" "$l" "  gi id=3 profile=5g.50gb placement=0+2"
check_bad "instance of an unknown profile" "$l" "not a profile of GPU 0"
l=$(ln_of "$base" 'ci gi=3 ')
u=$(awk '$1=="ci" && $2=="gi=2" {sub(/uuid=/, "", $4); print $4}' "$base")
break_at "$base" "$l" "  ci gi=3 id=0 uuid=$u"; check_bad "duplicate UUID" "$l" "duplicate UUID"
break_at "$base" 1 "gpupack-topology 9"; check_bad "future version" 1 "version '9' is not supported"
printf 'hello\n' >"$T/bad.topo"; check_bad "not a topology" 1 "not a gpupack topology"

# --- GPUPACK_SIM, read-only, no driver ---
cp "$mig" "$T/env.topo"
sum=$(cksum <"$T/env.topo")
GPUPACK_SIM="$T/env.topo" gp devices --json >"$T/out" 2>"$T/err"
ok $? "GPUPACK_SIM selects the simulation"
is "$(jq -r .backend "$T/out")" "sim:$T/env.topo" "GPUPACK_SIM: backend names the file"
GPUPACK_SIM="$T/env.topo" gp devices --profiles >/dev/null 2>&1
is "$(cksum <"$T/env.topo")" "$sum" "devices changes nothing in the topology"
GPUPACK_SIM="$T/nope.topo" gp devices >/dev/null 2>"$T/err"
is "$?" 2 "GPUPACK_SIM naming a missing file: exit 2"
if ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
	ok 0 "# SKIP no-driver path: this machine has libnvidia-ml.so.1"
else
	run gp devices
	is "$rc" 3 "no driver and no --sim: exit 3"
	one_line "$err" "no driver: one line"
fi

# --- read-only: devices creates nothing, not even the state directory -------------------------
rm -rf "$T/nostate"
GPUPACK_STATE_DIR="$T/nostate" gp --sim "$TOPO/h100-80gb.topo" devices >/dev/null 2>&1
ok "$([ ! -e "$T/nostate" ]; echo $?)" "devices creates no state directory (no MPS daemon managed yet)"

# --- --sim NAME: a shipped topology by name, from the build tree or the installed share -------
mkdir -p "$T/cwd/tree" "$T/cwd/share"
cp "$TOPO/h100-80gb.topo" "$T/cwd/tree/only-here.topo"
cp "$TOPO/h100-80gb.topo" "$T/cwd/share/only-here.topo"
run sh -c 'cd "$1/cwd" && exec $2 --sim h100-80gb devices' sh "$T" "$GPUPACK"
is "$rc" 0 "--sim h100-80gb from another directory: found in the build tree"
like "$out" "H100" "and it is the H100"
run sh -c 'cd "$1/cwd" && exec $2 --sim only-here devices' sh "$T" "$GPUPACK"
ok "$([ "$rc" -ne 0 ]; echo $?)" "a name is not looked up in the directories ./tree or ./share"
like "$err" "only-here" "the error names what was asked"
