# lib.sh: shared helpers for the scripts in tests/gpu/ (run on a machine with
# a GPU, usually as root, from the repository root). Source it, then:
#
#   gpu_init NAME        start the report $OUT/NAME.md ($OUT defaults to
#                        ./gpu-out); header with date, host, GPU, driver, CUDA,
#                        and the command that ran
#   pass NAME            record a passed check
#   fail NAME [WHY]      record a failed check
#   check STATUS NAME [WHY]   pass when STATUS is 0, else fail
#   skip NAME WHY        record a check that could not run here
#   info TEXT            a line for the report that is not a check
#   raw LABEL TEXT       keep TEXT (a JSON line, a command's output) for the
#                        report's raw section
#   bg CMD...            start CMD in the background, remembered so that it is
#                        killed (by pid) at exit; sets BG_PID
#   gpu_finish           the summary line, the raw section; exit 1 on any failure
#
# Every check prints "PASS name" / "FAIL name: why" / "SKIP name: why" on
# stdout as it happens, and the report gets the same lines.
# shellcheck shell=bash

: "${OUT:=$PWD/gpu-out}"
GPU_PASS=0
GPU_FAIL=0
GPU_SKIP=0
GPU_BG_PIDS=""
GPU_REPORT=""
GPU_RAW=""

gpu_init() {
	mkdir -p "$OUT" || { echo "cannot create OUT=$OUT" >&2; exit 2; }
	GPU_REPORT="$OUT/$1.md"
	GPU_RAW="$OUT/.$1.raw"
	: >"$GPU_RAW"
	trap gpu_cleanup EXIT
	trap 'exit 130' INT TERM
	{
		echo "# $1"
		echo
		echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
		echo "- host: $(hostname 2>/dev/null || echo unknown)"
		echo "- user: $(id -un 2>/dev/null || id -u)"
		echo "- command: \`${GPU_COMMAND:-$0}\`"
		echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
		if command -v nvidia-smi >/dev/null 2>&1; then
			echo "- GPU: $(nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader 2>&1 | paste -sd ';' -)"
			echo "- driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1 | head -1)"
			echo "- CUDA (driver): $(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -1)"
		else
			echo "- GPU: nvidia-smi not found"
		fi
		if command -v nvcc >/dev/null 2>&1; then
			echo "- nvcc: $(nvcc --version 2>&1 | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
		fi
		echo
		echo "## Checks"
		echo
	} >"$GPU_REPORT"
}

_gpu_line() {
	echo "$1"
	[ -n "$GPU_REPORT" ] && printf -- '- %s\n' "$1" >>"$GPU_REPORT"
}

pass() {
	GPU_PASS=$((GPU_PASS + 1))
	_gpu_line "PASS $1"
}

fail() {
	GPU_FAIL=$((GPU_FAIL + 1))
	_gpu_line "FAIL $1${2:+: $2}"
}

check() {
	if [ "$1" -eq 0 ]; then
		pass "$2"
	else
		fail "$2" "${3:-}"
	fi
}

skip() { # NAME WHY
	GPU_SKIP=$((GPU_SKIP + 1))
	_gpu_line "SKIP $1${2:+: $2}"
}

info() {
	_gpu_line "INFO $*"
}

raw() {
	[ -n "$GPU_RAW" ] || return 0
	{
		echo "### $1"
		echo
		echo '```'
		printf '%s\n' "$2"
		echo '```'
		echo
	} >>"$GPU_RAW"
}

bg() {
	"$@" &
	BG_PID=$!
	GPU_BG_PIDS="$GPU_BG_PIDS $BG_PID"
}

# Kill what bg started (by pid, never by name) and wait for it.
gpu_cleanup() {
	local p
	for p in $GPU_BG_PIDS; do
		if kill -0 "$p" 2>/dev/null; then
			kill "$p" 2>/dev/null
			sleep 0.5
			kill -9 "$p" 2>/dev/null
		fi
		wait "$p" 2>/dev/null
	done
	GPU_BG_PIDS=""
}

gpu_finish() {
	local total=$((GPU_PASS + GPU_FAIL))
	local line="$GPU_PASS of $total checks passed, $GPU_FAIL failed, $GPU_SKIP skipped"

	gpu_cleanup
	echo "SUMMARY: $line"
	if [ -n "$GPU_REPORT" ]; then
		{
			echo
			echo "## Summary"
			echo
			echo "$line"
			echo
			echo "## Raw output"
			echo
			cat "$GPU_RAW"
		} >>"$GPU_REPORT"
		rm -f "$GPU_RAW"
		echo "report: $GPU_REPORT"
	fi
	[ "$GPU_FAIL" -eq 0 ]
}
