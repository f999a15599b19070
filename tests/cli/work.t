#!/bin/sh
# work.t: gpupack-work's command line, without a GPU.
#
# Usage errors exit 2 with one line on stderr and nothing on stdout; every
# mode, given good arguments on a machine without a GPU, prints one JSON line
# with "ok":false and an error naming the missing CUDA device, and exits 1.
# What the modes do on a GPU is checked by tests/gpu/work.sh.
# shellcheck disable=SC2154 # rc, out, err: set by run() in lib.sh
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

W="$GPUPACK_BUILD/gpupack-work"

skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n # skip $*"
}

if [ "${GPUPACK_TEST_PASS:-}" = san ]; then
	skip "gpupack-work is not built with the sanitizers: the first pass ran these"
	exit 0
fi
if [ ! -x "$W" ]; then
	skip "gpupack-work not built (needs nvcc)"
	exit 0
fi

# usage_err NAME ARGS...: exit 2, one line on stderr naming the program, no JSON anywhere
usage_err() {
	name=$1
	shift
	run "$W" "$@"
	if [ "$rc" -eq 2 ] && [ -z "$out" ] &&
	    [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] &&
	    printf '%s' "$err" | grep -q '^gpupack-work: ' &&
	    ! printf '%s' "$err" | grep -q '[{}]'; then
		ok 0 "usage error: $name"
	else
		ok 1 "usage error: $name"
		printf '#   args: %s\n#   rc=%s stdout: %s\n#   stderr: %s\n' "$*" "$rc" "$out" "$err"
	fi
}

# --help: the whole usage on stdout, exit 0, every mode named, no JSON
run "$W" --help
is "$rc" 0 "--help exits 0"
for m in matmul spin alloc smcount fault info; do
	like "$out" "^  $m( |$)" "--help names mode $m"
done
like "$out" "--start-at" "--help names --start-at"
like "$out" "--cpu-ms" "--help names --cpu-ms"
is "$(printf '%s' "$out" | grep -c '[{}]')" 0 "--help prints no JSON"
is "$err" "" "--help prints nothing on stderr"

usage_err "no arguments"
usage_err "unknown mode" bogus
like "$err" "bogus: unknown mode" "the unknown mode is named"
usage_err "unknown option" --frobnicate info
usage_err "unknown short option" -x info
usage_err "second positional argument" info extra
usage_err "matmul without --n" matmul --iters 2
like "$err" "--n N is required" "missing --n is named"
usage_err "matmul without --iters" matmul --n 64
usage_err "spin without --ms" spin
usage_err "alloc without --mib" alloc
usage_err "--streams with --batched" matmul --n 64 --iters 1 --streams 2 --batched 2
usage_err "option of another mode" spin --ms 5 --n 64
usage_err "option given twice" matmul --n 64 --n 32 --iters 1
usage_err "option without a value" matmul --iters 1 --n
usage_err "--n not a number" matmul --n abc --iters 1
usage_err "--n empty" matmul --n '' --iters 1
usage_err "--n fractional" matmul --n 1.5 --iters 1
usage_err "--n trailing junk" matmul --n 64k --iters 1
usage_err "--n zero" matmul --n 0 --iters 1
like "$err" "--n: 0: out of range" "the bad value and its option are named"
usage_err "--n too large" matmul --n 65537 --iters 1
usage_err "--n beyond long long" matmul --n 99999999999999999999 --iters 1
usage_err "--iters zero" matmul --n 64 --iters 0
usage_err "--streams too many" matmul --n 64 --iters 1 --streams 65
usage_err "--warmup negative" matmul --n 64 --iters 1 --warmup -1
usage_err "--ms not a number" spin --ms x
usage_err "--ms nan" spin --ms nan
usage_err "--mib fractional" alloc --mib 1.5
usage_err "--cpu-ms inf" smcount --cpu-ms inf
usage_err "--start-at not a number" info --start-at soon
usage_err "--device negative" --device -1 info

# On a machine with a GPU the rest would run real work: tests/gpu/ covers that.
if [ -e /dev/nvidiactl ] || [ -e /dev/nvidia0 ]; then
	skip "a GPU is present: the no-GPU failures are not observable here"
	exit 0
fi

HAVE_PY=0
command -v python3 >/dev/null 2>&1 && HAVE_PY=1

# json_check LINE NAME: LINE parses as one JSON object with the common keys (python3)
json_check() {
	if [ "$HAVE_PY" -eq 0 ]; then
		skip "python3 not installed: JSON not parsed"
		return
	fi
	printf '%s' "$1" | python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
assert isinstance(o, dict)
for k in ("mode", "ok", "pid", "device", "uuid", "t_start", "t_end", "seconds", "error"):
    assert k in o, k
assert o["ok"] is False
assert isinstance(o["t_start"], float) and isinstance(o["seconds"], float)
' 2>/dev/null
	ok $? "$2"
}

# no_gpu NAME MODE ARGS...: exit 1, one JSON line, "ok":false, "no CUDA device"
no_gpu() {
	name=$1
	mode=$2
	shift 2
	run "$W" "$@"
	is "$rc" 1 "$name: exits 1 without a GPU"
	is "$(printf '%s\n' "$out" | wc -l)" 1 "$name: one line on stdout"
	like "$out" '^\{"mode":"'"$mode"'","ok":false,"pid":[0-9]+,' "$name: JSON line opens with mode, ok, pid"
	like "$out" '"error":"no CUDA device: [^"]*"\}$' "$name: error names the missing device"
	like "$out" '"t_start":[0-9]+\.[0-9]{6},"t_end":[0-9]+\.[0-9]{6},"seconds":' "$name: times present"
	json_check "$out" "$name: valid JSON with the common keys"
	is "$(printf '%s\n' "$err" | wc -l)" 1 "$name: one line on stderr"
}

no_gpu "matmul" matmul matmul --n 64 --iters 2
no_gpu "matmul streams" matmul matmul --n 64 --iters 2 --streams 3 --cpu-ms 1
no_gpu "spin" spin spin --ms 10
no_gpu "alloc" alloc alloc --mib 16 --hold-ms 5
no_gpu "smcount" smcount smcount
no_gpu "fault" fault fault
no_gpu "info" info info
no_gpu "--device before mode" info --device 0 info

# The arguments come back in the line, also in the --opt=value form.
run "$W" matmul --n=48 --iters=3 --streams 2
like "$out" '"n":48,"iters":3,"streams":2,"batched":0,"warmup":2,' "matmul echoes its arguments"
run "$W" matmul --n 16 --iters 1 --batched 5 --warmup 0
like "$out" '"streams":1,"batched":5,"warmup":0,' "matmul --batched echoes P"
run "$W" alloc --mib 7 --hold-ms 2.5
like "$out" '"mib":7,"hold_ms":2.5,' "alloc echoes --mib and --hold-ms"

# Setup comes before the wait: a failing setup does not sleep until --start-at.
far=$(( $(date +%s) + 3600 ))
run timeout 60 "$W" info --start-at "$far"
is "$rc" 1 "a failing setup reports at once, not after --start-at"
