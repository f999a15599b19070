#!/bin/bash
# shellcheck disable=SC2154 # out, err and rc are set by lib.sh's run
# run-options.t: `gpupack run` declares each option once (cmd/run.c's table):
# its --help, the man page's synopsis of run and completion/gpupack.bash
# name the same options, and every GNU parallel option it refuses is refused
# with one line that names what to use instead.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

help=$($GPUPACK run --help)
# the options --help lists (not the refused ones), one a line
help_names() {
	printf '%s\n' "$help" | awk '
	/^GNU parallel.s options that gpupack refuses/ { exit }
	/^  also: / || (also && /^        -/) {
		also = 1; sub(/^  also: /, ""); n = split($0, w, " ")
		for (i = 1; i <= n; i++) { x = w[i]; sub(/,$/, "", x); if (x ~ /^-/) print x }
		next
	}
	{ also = 0 }
	/^  -/ {
		line = substr($0, 3)
		if (match(line, /^-[a-zA-Z0-9]/)) { print substr(line, 1, 2); line = substr(line, 3); sub(/^, /, "", line) }
		if (match(line, /^--[a-z0-9-]+/)) print substr(line, RSTART, RLENGTH)
	}' | sort -u
}
refused_names() {
	printf '%s\n' "$help" | awk '/^GNU parallel.s options that gpupack refuses/ { on = 1; next } on && /^  / { print } on && /^$/ { exit }' |
		tr ' ' '\n' | sed 's/,$//' | grep '^-' | sort -u
}
# what completion offers comes from the binary (tests/cli/completion.t runs the script itself)
completion_names() {
	$GPUPACK --completion-helper run | sed 's/=.*//' | sort -u
}
man_names() {
	sed -n '/run options: begin/,/run options: end/p' "$GPUPACK_SRC/doc/gpupack.1" |
		grep -oE '\\fB(\\-)+[A-Za-z0-9]([a-z0-9]|\\-)*' | sed 's/\\fB//; s/\\-/-/g' | sort -u
}

h=$(help_names)
ok $(($(printf '%s\n' "$h" | wc -l) < 80)) "--help lists the options ($(printf '%s\n' "$h" | wc -l))"
is "$(diff <(printf '%s\n' "$h") <(completion_names) | grep '^[<>]' | tr '\n' ' ')" "" \
	"gpupack --completion-helper run: every option --help lists, and no other"
is "$(diff <(printf '%s\n' "$h") <(man_names) | grep '^[<>]' | tr '\n' ' ')" "" \
	"the man page's synopsis of run names every option --help lists, and no other"
is "$(comm -12 <(printf '%s\n' "$h") <(refused_names) | tr '\n' ' ')" "" "no option is both listed and refused"

# each refused option: exit 255, one line, "is not supported: <what instead>"
bad=""
n=0
for o in $(refused_names); do
	# after -k: --shebang first is the #! line's form (its script the input, as parallel's)
	run $GPUPACK --sim "$TOPO/h100-80gb.topo" run -k "$o" true ::: 1
	case $err in *"needs a value"*) run $GPUPACK --sim "$TOPO/h100-80gb.topo" run -k "$o" x true ::: 1 ;; esac
	n=$((n + 1))
	if [ "$rc" -ne 255 ] || [ -n "$out" ] || [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ] ||
		! printf '%s' "$err" | grep -q "^gpupack: run: GNU parallel's $o is not supported: ..."; then
		bad="$bad $o($rc: $err)"
	fi
done
ok $((n < 40)) "the refused options are listed ($n)"
is "$bad" "" "each refused option: exit 255, one line naming the alternative"

# an option read from $PARALLEL or a profile is refused the same way, saying where it came from
run env PARALLEL=--block-timeout=1 $GPUPACK --sim "$TOPO/h100-80gb.topo" run true ::: 1
like "$err" "^gpupack: run: in \\\$PARALLEL: GNU parallel's --block-timeout is not supported" "a refused option in \$PARALLEL says so"
is "$rc" 255 "exit 255"
