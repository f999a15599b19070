#!/bin/sh
# nvml.t: `gpupack devices` on the NVML backend, without a GPU.
#
# gpupack loads the fake libnvidia-ml.so.1 (tests/fakenvml/fakenvml.c)
# instead of the driver's, through GPUPACK_NVML_LIB or LD_LIBRARY_PATH, so
# these run src/gpu/nvml*.c's real code: every field of devices --json is
# checked against the fake machine, the profile table against the measured
# H200 rows of data/mig-profiles.csv, and each driver failure must give one
# line and exit 3 with nothing on stdout.
# shellcheck disable=SC2154 # rc, out, err: set by run() in lib.sh
# shellcheck disable=SC2086 # $GPUPACK may be "valgrind-run gpupack": split on purpose
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

FAKE_DIR="$GPUPACK_BUILD/tests/fakenvml"
export GPUPACK_NVML_LIB="$FAKE_DIR/libnvidia-ml.so.1"
unset FAKENVML_MACHINE FAKENVML_FAIL FAKENVML_OLD FAKENVML_NPROCS

# fields JSON < LINES: each line "JQ-EXPR<tab>WANT" is one test, the value
# compared as jq -c prints it. One jq run per document: jq starts slowly.
fields() {
	cat >"$T/.fields"
	awk -F'\t' '{ printf "%s(%s)", (NR > 1 ? ", " : ""), $1 }' "$T/.fields" >"$T/.prog"
	printf '%s' "$1" | jq -c "$(cat "$T/.prog")" >"$T/.got" 2>"$T/.jqerr"
	if [ "$(wc -l <"$T/.got")" -ne "$(wc -l <"$T/.fields")" ]; then
		ok 1 "jq answers every expression"
		diag "$(cat "$T/.jqerr")"
		return
	fi
	exec 3<"$T/.got"
	while IFS='	' read -r expr want; do
		IFS= read -r got <&3
		is "$got" "$want" "$expr = $want"
	done <"$T/.fields"
	exec 3<&-
}

# --- one H200, MIG off --------------------------------------------------------
# the fake's first process is the caller: its name comes from /proc/PID/comm
COMM=gpupack
[ -n "${GPUPACK_VALGRIND:-}" ] && COMM=memcheck-amd64-
run $GPUPACK devices --json --profiles
is "$rc" 0 "h200: devices --json exits 0"
is "$err" "" "h200: nothing on stderr"
j=$out
fields "$j" <<EOF
.backend	"nvml"
.driver_version	"580.159.04"
.cuda_version	"13.0"
.gpus | length	1
.gpus[0].index	0
.gpus[0].uuid	"GPU-1d5a3c2e-7b11-4c9e-9f00-0000000000c8"
.gpus[0].name	"NVIDIA H200"
.gpus[0].pci_bus_id	"00000000:19:00.0"
.gpus[0].memory_total_bytes	$((143771 * 1048576))
.gpus[0].memory_reserved_bytes	$((568 * 1048576))
.gpus[0].memory_used_bytes	$((572 * 1048576))
.gpus[0].memory_free_bytes	$(((143771 - 572) * 1048576))
.gpus[0].sms	132
.gpus[0].compute_capability	"9.0"
.gpus[0].compute_mode	"default"
.gpus[0].mig_current	"disabled"
.gpus[0].mig_pending	"disabled"
.gpus[0].gpu_instances	[]
.gpus[0].processes | length	2
.gpus[0].processes[0].name	"$COMM"
.gpus[0].processes[0].memory_used_bytes	$((512 * 1048576))
.gpus[0].processes[0].gpu_instance	null
.gpus[0].processes[1].name	""
.gpus[0].processes[1].memory_used_bytes	0
EOF

# the profile table, row by row, against the measured H200 rows of the CSV
want=$(awk -F, '$1 == "H200-141GB" && $10 == "measured" {
	n = split($9, p, " "); pl = "";
	for (i = 1; i <= n; i++) { split(p[i], s, "+"); pl = pl (i > 1 ? " " : "") s[1] "+" s[2] }
	print $2, $3, $4, $5, $6, $7, $8, pl }' "$GPUPACK_SRC/data/mig-profiles.csv" | sort -n)
got=$(printf '%s' "$j" | jq -r '.gpus[0].profiles[] |
	"\(.profile_index) \(.profile_id) \(.name) \(.slices) \(.memory_bytes / 1048576) \(.sms) \(.max_count) " +
	([.placements[] | "\(.start)+\(.size)"] | join(" "))' | sort -n)
is "$(printf '%s\n' "$want" | wc -l)" 7 "seven measured H200 rows in data/mig-profiles.csv"
is "$got" "$want" "h200: profiles match the measured rows (index id name slices MiB SMs count placements)"

run $GPUPACK devices --json
fields "$out" <<EOF
.gpus[0] | has("profiles")	false
EOF

# --- the library found by its plain name, through the loader's path ----------
run env -u GPUPACK_NVML_LIB LD_LIBRARY_PATH="$FAKE_DIR" $GPUPACK devices --json
is "$rc" 0 "dlopen(libnvidia-ml.so.1) through LD_LIBRARY_PATH"
fields "$out" <<EOF
.gpus[0].name	"NVIDIA H200"
EOF

# --- two H100s: GPU 0 with MIG on, GPU 1 with MIG pending ----------------------
FAKENVML_MACHINE=h100-mig
export FAKENVML_MACHINE
run $GPUPACK devices --json
is "$rc" 0 "h100-mig: devices --json exits 0"
j=$out
fields "$j" <<EOF
.gpus | length	2
[.gpus[].mig_current]	["enabled","disabled"]
[.gpus[].mig_pending]	["enabled","enabled"]
[.gpus[].compute_mode]	["default","exclusive-process"]
[.gpus[0].gpu_instances[].id]	[1,5,6]
[.gpus[0].gpu_instances[].profile]	["3g.40gb","1g.10gb","1g.10gb"]
[.gpus[0].gpu_instances[].profile_id]	[9,19,19]
[.gpus[0].gpu_instances[].placement | "\(.start)+\(.size)"]	["0+4","4+1","5+1"]
[.gpus[0].gpu_instances[].sms]	[60,16,16]
.gpus[0].gpu_instances[0].memory_total_bytes	$((40320 * 1048576))
.gpus[0].gpu_instances[0].memory_used_bytes	$((113 * 1048576))
[.gpus[0].gpu_instances[].compute_instances | length]	[1,1,0]
.gpus[0].gpu_instances[0].compute_instances[0].uuid	"MIG-5eed0000-0000-4000-8000-000000010000"
.gpus[0].gpu_instances[0].compute_instances[0].sms	60
.gpus[0].gpu_instances[0].compute_instances[0].slices	3
.gpus[0].gpu_instances[1].compute_instances[0].uuid	"MIG-5eed0000-0000-4000-8000-000000050000"
[.gpus[0].processes[] | [.gpu_instance, .compute_instance]]	[[1,0]]
.gpus[1].gpu_instances	[]
EOF
unset FAKENVML_MACHINE

# --- a driver older than the versioned structs -----------------------------------
run env FAKENVML_OLD=1 $GPUPACK devices --json --profiles
is "$rc" 0 "old driver: v1 fallbacks work"
fields "$out" <<EOF
.gpus[0].memory_total_bytes	$((143771 * 1048576))
.gpus[0].memory_reserved_bytes	0
[.gpus[0].profiles[] | select(.profile_index == 7) | .name]	["1g.16gb+me"]
EOF

# --- failures: one line, exit 3, nothing on stdout ----------------------------------
# env_fail NAME WANT-REGEX ENV...: devices fails with exit 3 and one matching line
env_fail() {
	name=$1
	want=$2
	shift 2
	run env "$@" $GPUPACK devices --json
	is "$rc" 3 "$name: exit 3"
	is "$out" "" "$name: nothing on stdout"
	one_line "$err" "$name: one line"
	like "$err" "$want" "$name: says why"
}

env_fail "library missing" \
	'^gpupack: devices: NVIDIA driver not found: cannot load .*libnvidia-ml\.so\.1 \(.*\)$' \
	GPUPACK_NVML_LIB="$T/none/libnvidia-ml.so.1"
# (only where no real driver is installed: on a GPU machine the loader finds it)
if ! ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
	env_fail "no library anywhere" \
		'^gpupack: devices: NVIDIA driver not found: cannot load libnvidia-ml\.so\.1 \(' \
		-u GPUPACK_NVML_LIB LD_LIBRARY_PATH="$T/none" GPUPACK_NVML_LIB=
fi
env_fail "nvmlInit fails" \
	'^gpupack: devices: NVIDIA driver not found: nvmlInit_v2: Driver Not Loaded \(is the nvidia kernel module loaded\?\)$' \
	FAKENVML_FAIL=nvmlInit_v2=9
env_fail "nvmlInit unknown error" '^gpupack: devices: nvmlInit_v2: Unknown Error$' \
	FAKENVML_FAIL=nvmlInit_v2=999
env_fail "no permission" \
	'^gpupack: devices: nvmlDeviceGetMemoryInfo_v2 on GPU 0: Insufficient Permissions \(needs root\)$' \
	FAKENVML_FAIL=nvmlDeviceGetMemoryInfo_v2=4
env_fail "GPU lost" '^gpupack: devices: nvmlDeviceGetCount_v2: GPU is lost' \
	FAKENVML_FAIL=nvmlDeviceGetCount_v2=15

# --sim never loads NVML: its errors are about the topology, never the driver
run env GPUPACK_NVML_LIB="$T/none.so" $GPUPACK --sim "$T/missing.topo" devices
printf '%s' "$err" | grep -q 'NVIDIA driver'
ok $((! $?)) "--sim does not load NVML"
