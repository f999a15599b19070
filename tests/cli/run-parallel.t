#!/bin/sh
# shellcheck disable=SC1083,SC2016,SC2013 # replacement strings and the tasks' own $VARS are literal on purpose
# run-parallel.t: replacement strings and input handling compared with GNU
# parallel's own output on the same inputs (parallel is installed by .ci/run).
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

gp() {
	# shellcheck disable=SC2086
	$GPUPACK "$@"
}
cd "$T" || exit 1
if ! command -v parallel >/dev/null 2>&1 || ! parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
	echo "1..0 # SKIP GNU parallel is not installed (.ci/run installs it)"
	trap - EXIT
	rm -rf "$T"
	exit 0
fi
printf 'f/one.txt\n/abs/two.tar.gz\nplain\n.hidden\ndir/\n' >list

# same ARGS... : -k output of both must be equal ({%} is left out: slots are scheduled differently)
same() {
	name=$1
	shift
	want=$(parallel --will-cite -k "$@" 2>&1)
	got=$(gp --sim "$TOPO/h100-80gb.topo" run --share timeslice -k "$@" 2>&1)
	is "$got" "$want" "$name"
}

same "{} {.} {/} {//} {/.} {#}" echo {} {.} {/} {//} {/.} {#} ::: a/b.c d.e/f g
same "paths of every shape" echo {} {.} {/} {//} {/.} ::: a/ / /a .bashrc a.b/ .. x.y.z ./p 'sp ace/f.g'
same "two sources: {1} {2} and their path forms" echo {1} {2.} {1/} {1//} {1/.} {2/} ::: a/b.c d.e/f ::: x/y.z q
same "{} with two sources" echo {} {.} ::: a.1 b.2 ::: c.3
same "no replacement string: inputs appended" echo pre ::: a b ::: 1 2
same "three sources: order" echo ::: a b ::: 1 2 ::: x y
same ":::: FILE" echo {/.} :::: list
same "-a FILE with :::" -a list echo {1} {2} ::: k
same "a source out of range is empty" echo "[{3}]" ::: a ::: b
same "inside words" echo "pre{}post" "x{.}y" "{#}{#}" ::: a.b
same "not replacement strings" echo "{foo}" "{" "}" "{ }" "{1x}" ::: a
same "{-1} {-2}: sources from the last" echo {-1} {-2.} ::: a.b ::: c ::: d
same "an input with shell characters" echo ::: '; rm -rf x' '$(id)' '`id`' "it's" '*'
want=$(parallel --will-cite -k echo got {.} <list 2>&1)
got=$(gp --sim "$TOPO/h100-80gb.topo" run --share timeslice -k echo got {.} <list 2>&1)
is "$got" "$want" "stdin lines"
got=$(gp --sim "$TOPO/h100-80gb.topo" run --share timeslice -k echo got {.} :::: - <list 2>&1)
is "$got" "$want" ":::: - is stdin"
same "empty input line" echo "[{}]" ::: '' x

# --- forms make mutate found unchecked (bench/results/2026-11-22-mutation.md) -----------------
same "--dry-run: {%} is the first slot" --dry-run echo {%} ::: a
same "-j N%: accepted" -j 50% echo ::: a b
run_rc() { "$@" >/dev/null 2>&1; echo $?; }
want=$(run_rc parallel --will-cite -j 1 --halt soon,fail=2 false ::: 1 2 3 4)
got=$(run_rc gp --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 1 --halt soon,fail=2 false ::: 1 2 3 4)
is "$got" "$want" "--halt soon,fail=2: the exit status counts the failures, as parallel's"
rm -rf R
gp --sim "$TOPO/h100-80gb.topo" run --share timeslice --results R echo ::: a >/dev/null 2>&1
got=$(run_rc gp --sim "$TOPO/h100-80gb.topo" run --share timeslice --results R echo ::: a)
is "$got" 0 "--results into a tree an earlier run made: its directories are reused"
printf 'a\0b\nc\n' >nul-inside
want=$(parallel --will-cite -k -d '\n' echo :::: nul-inside 2>/dev/null)
got=$(gp --sim "$TOPO/h100-80gb.topo" run --share timeslice -k -d '\n' echo :::: nul-inside 2>/dev/null)
is "$got" "$want" "a NUL inside a value (-d '\\n'): written as \\0, as parallel does"
same "--colsep: a negated class with ] in it" --colsep '[^]\d]+' echo {1}-{2} ::: ']1x]2' 'a]b'
same "--colsep: a class" --colsep '[,;]' echo {2}-{1} ::: 'a,b' 'c;d'
same "--colsep: an escaped dot outside a class" --colsep '\.' echo {2}-{1} ::: 'a.b' 'cxd.e'
rm -rf R2 R3
parallel --will-cite --results R2 --joblog jl2 echo ::: abc >/dev/null 2>&1
gp --sim "$TOPO/h100-80gb.topo" run --share timeslice --results R3 --joblog jl3 echo ::: abc >/dev/null 2>&1
is "$(cut -f6 jl3 | tail -n 1)" "$(cut -f6 jl2 | tail -n 1)" "--results: the joblog's Receive counts the bytes written to the files"
