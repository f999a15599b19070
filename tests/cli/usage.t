#!/bin/sh
# usage.t: every command words a bad option the same way, naming the word the
# user typed (issue #12's rough edge 5: `run -N2` once said "bad option 'run'",
# a missing value was called an unknown option, three commands had three
# wordings), and accepts --gpus and --gpu alike.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

G="$GPUPACK --sim $TOPO/h100-80gb.topo"
# bad CMD WANT: exit 2 (255 for run), one line, and the wording
bad() {
	want=$1
	shift
	# shellcheck disable=SC2086
	run $G "$@"
	case $1 in run) code=255 ;; *) code=2 ;; esac
	is "$rc" "$code" "$*: exit $code"
	one_line "$err" "$*: one line"
	like "$err" "$want" "$*: $want"
}
bad "^gpupack: run: unknown option '-Z' \(see gpupack run --help\)$" run -kZ2 true ::: 1
bad "^gpupack: run: unknown option '-Z' " run --bar -Z2 true ::: 1
bad "^gpupack: run: option '--joblog' needs a value " run --joblog
bad "^gpupack: run: option '-j' needs a value " run -j
bad "^gpupack: run: option '--bar' takes no value " run --bar=1 true ::: 1
bad "^gpupack: run: ambiguous option '--re' \(--replace, --resume" run --re x true ::: 1
bad "^gpupack: devices: unknown option '--bogus' \(see gpupack devices --help\)$" devices --bogus
bad "^gpupack: devices: option '--gpus' needs a value " devices --gpus
bad "^gpupack: devices: unknown option '-x' " devices -x
bad "^gpupack: mps start: unknown option '--bogus' " mps start --bogus
bad "^gpupack: mps start: option '--gpus' needs a value " mps start --gpus
bad "^gpupack: mps status: option '--sm' does not apply to mps status " mps status --sm 5
bad "^gpupack: mig plan: unknown option '--bogus' \(see gpupack mig --help\)$" mig plan --bogus
bad "^gpupack: mig plan: option '--gpus' needs a value " mig plan --gpus
bad "^gpupack: timeslice get: unknown option '--x' " timeslice get --x
bad "^gpupack: bench: unknown option '--bogus' \(see gpupack bench --help\)$" bench --bogus
bad "^gpupack: bench: option '--sizes' needs a value " bench --sizes

# --gpus everywhere, --gpu too
for c in "devices" "timeslice get" "mig profiles"; do
	for o in --gpus --gpu; do
		# shellcheck disable=SC2086
		run $G $c $o 0
		is "$rc" 0 "$c $o 0"
	done
done
# shellcheck disable=SC2086
out=$($G run --share timeslice --gpu 0 -k echo ::: a 2>&1)
is "$out" "a" "run --gpu 0"
for c in devices mps timeslice mig run bench; do
	# shellcheck disable=SC2086
	like "$($G $c --help 2>&1)" "--gpus SEL" "$c --help documents --gpus"
done

# the global --sim without its FILE (issue 32: it said "unknown global option")
for a in "--sim" "--sim=" "--sim-write" "--sim devices" "--sim-write mig"; do
	# shellcheck disable=SC2086
	run $GPUPACK $a
	is "$rc" 2 "gpupack $a: exit 2"
	one_line "$err" "gpupack $a: one line"
	like "$err" "^gpupack: option '--sim(-write)?' needs a FILE: .*--sim h100-80gb devices" \
	    "gpupack $a: says it needs a FILE, with an example"
	is "$out" "" "gpupack $a: nothing on stdout"
done
run $GPUPACK --bogus devices
like "$err" "^gpupack: unknown global option '--bogus'" "an unknown global option is still called one"
