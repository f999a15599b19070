#!/usr/bin/env bash
# all.sh: every GPU check in one device call. Builds gpupack and gpupack-work,
# then runs the scripts named on the command line (default: all of them) in
# order, each writing its report under $OUT/reports; packs the reports into
# $OUT/gpu-reports.tgz (the device tool brings back few files).
#
#   bash tests/gpu/all.sh [foundation mps mig farm mps-exec bench-quick bench-full bench-full2 bench-sigint ...]
#
# Never changes a card setting; every MPS daemon a script starts is stopped
# by that script, and any left over is stopped here before returning.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-/tmp/gpupack-gpu-out}
TOP=$OUT
# reports are written outside $OUT: only the archive and the summary come back
R=/tmp/gpupack-gpu/reports
rm -rf "$R"
mkdir -p "$R" "$TOP"
export OUT="$R"
export NCCL_NVLS_ENABLE=0

{
	echo "# gpupack GPU run $(date -u +%FT%TZ)"
	echo "host: $(hostname)  kernel: $(uname -r)"
	nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,mig.mode.current,compute_mode --format=csv
	nvcc --version | tail -n 2
	echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown) (plus uncommitted changes: $(git status --porcelain 2>/dev/null | wc -l) files)"
} >"$R/setup.txt" 2>&1
cat "$R/setup.txt"

t0=$(date +%s)
if ! make -j16 >"$R/build.log" 2>&1; then
	echo "FAIL: build (see build.log)"; tail -n 30 "$R/build.log"
	tar -C "$R/.." -czf "$TOP/gpu-reports.tgz" reports 2>/dev/null
	exit 1
fi
echo "build: $(($(date +%s) - t0)) s"
export PATH="$PWD/build:$PATH"

scripts=("$@")
[ ${#scripts[@]} -gt 0 ] || scripts=(foundation mps mig farm mps-exec bench-quick)
status=0
for s in "${scripts[@]}"; do
	case "$s" in
	mps-exec) f=bench/mps-exec.sh; set -- ;;
	idle-contexts) f=bench/idle-contexts.sh; set -- ;;
	bench-quick) f=tests/gpu/bench.sh; set -- quick ;;
	bench-full) f=tests/gpu/bench.sh; set -- full ;;
	bench-full2) f=tests/gpu/bench.sh; set -- full2 ;;
	bench-sigint) f=tests/gpu/bench.sh; set -- sigint ;;
	bench-command) f=tests/gpu/bench.sh; set -- command ;;
	auto) f=bench/auto.sh; set -- "$OUT/auto.md" ;;
	*) f=tests/gpu/$s.sh; set -- ;;
	esac
	t1=$(date +%s)
	echo "=== $s ($f)"
	if [ ! -f "$f" ]; then
		echo "MISSING: $f"; status=1; continue
	fi
	# a script that hangs must not cost the whole call: its own limit, then the next one
	limit=${LIMIT:-240}
	case "$s" in bench-full | bench-full2) limit=${BENCH_FULL_LIMIT:-540} ;; bench-quick) limit=200 ;;
	auto) limit=${AUTO_LIMIT:-570} ;; esac
	timeout -k 10 "$limit" bash "$f" "$@" >"$R/$s.log" 2>&1
	rc=$?
	[ $rc -eq 124 ] && echo "TIMEOUT: $s ran past ${limit} s"
	echo "=== $s: rc=$rc in $(($(date +%s) - t1)) s"
	grep -E '^(PASS|FAIL|SKIP|RESULT|SUMMARY)' "$R/$s.log" | tail -n 40
	[ $rc -eq 0 ] || status=1
	# no daemon of ours may outlive a script
	# (zombies are not ours: the VM's init reaps the daemons' intermediate forks late)
	# (by program name: a command line that merely mentions nvidia-cuda-mps is not one)
	ps -eo pid,stat,comm,args | awk '$2 !~ /^Z/ && $3 ~ /^nvidia-cuda-mps/' >"$R/$s.leftover"
	[ -s "$R/$s.leftover" ] && { echo "LEFTOVER MPS processes after $s:"; cat "$R/$s.leftover"; }
	# what has been measured so far comes back even if a later script runs the call out
	tar -C "$R/.." -czf "$TOP/gpu-reports.tgz" reports
done
pkill -f nvidia-cuda-mps-control 2>/dev/null
tar -C "$R/.." -czf "$TOP/gpu-reports.tgz" reports
echo "total: $(($(date +%s) - t0)) s, status $status"
cp "$R/setup.txt" "$TOP/setup.txt"
exit $status
