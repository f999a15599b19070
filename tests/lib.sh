# lib.sh: TAP helpers for the shell tests in tests/cli/. Source it first.
#   GPUPACK         the binary under test (set by make test)
#   GPUPACK_BUILD   the build directory (test tools live in $GPUPACK_BUILD/tests/tools)
#   GPUPACK_SRC     the source tree (topologies/, data/)
#   T               a private scratch directory, removed at exit
set -u
: "${GPUPACK_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${GPUPACK_BUILD:=$GPUPACK_SRC/build}"
: "${GPUPACK:=$GPUPACK_BUILD/gpupack}"
TOPO="$GPUPACK_SRC/topologies"
TOOLS="$GPUPACK_BUILD/tests/tools"
T=$(mktemp -d "${TMPDIR:-/tmp}/gpupack-test.XXXXXX")
chmod 700 "$T"
export GPUPACK_STATE_DIR="$T/state"
unset GPUPACK_SIM CUDA_VISIBLE_DEVICES SLURM_JOB_ID SLURM_STEP_GPUS SLURM_JOB_GPUS
_tap_n=0
_tap_fail=0
trap '_tap_cleanup' EXIT

_tap_cleanup() {
	[ -n "${CLEANUP:-}" ] && eval "$CLEANUP"
	rm -rf "$T"
	echo "1..$_tap_n"
	[ "$_tap_fail" -eq 0 ] || exit 1
}

# ok COND-EXIT-STATUS NAME: record a result from the status of the last command
ok() {
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $_tap_n - $2"
	else
		echo "not ok $_tap_n - $2"
		_tap_fail=$((_tap_fail + 1))
		# tests/mutate.sh: one failure is all it needs to know
		[ -n "${TAP_BAIL:-}" ] && exit 1
	fi
}

# run CMD...: run, capturing stdout in $out, stderr in $err and status in $rc
run() {
	"$@" >"$T/.out" 2>"$T/.err"
	rc=$?
	out=$(cat "$T/.out")
	err=$(cat "$T/.err")
}

# is GOT WANT NAME
is() {
	if [ "$1" = "$2" ]; then
		ok 0 "$3"
	else
		ok 1 "$3"
		printf '#   got:  %s\n#   want: %s\n' "$1" "$2"
	fi
}

# like TEXT REGEX NAME
like() {
	if printf '%s' "$1" | grep -Eq -- "$2"; then
		ok 0 "$3"
	else
		ok 1 "$3"
		printf '#   got:  %s\n#   want match: %s\n' "$1" "$2"
	fi
}

# one_line TEXT NAME: an error is exactly one line starting "gpupack: "
one_line() {
	if [ "$(printf '%s\n' "$1" | wc -l)" -eq 1 ] && printf '%s' "$1" | grep -q '^gpupack: '; then
		ok 0 "$2"
	else
		ok 1 "$2"
		printf '#   got: %s\n' "$1"
	fi
}

diag() { printf '# %s\n' "$*"; }
# skip WHY [N]: N checks (1) that cannot run here pass as skipped, saying why
skip() {
	_skip_i=0
	while [ "$_skip_i" -lt "${2:-1}" ]; do
		_tap_n=$((_tap_n + 1))
		echo "ok $_tap_n # skip $1"
		_skip_i=$((_skip_i + 1))
	done
}
