#!/bin/sh
# run-trace.t: GPUPACK_TRACE=FILE, the farm's lifecycle line by line (an
# attempt's start, the facts its end was decided from and the verdict):
# what a person reads to learn why a task ran again or was recorded. A
# trace that cannot be written refuses the run before anything changes.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

cd "$T" || exit 1
R() { $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }

# a task that fails twice then succeeds (--retries 3), one that succeeds
cat >flaky.sh <<'SH'
echo "$1" >>runs
[ "$1" = b ] || exit 0
[ "$(grep -cx b runs)" -ge 3 ] && exit 0
exit 7
SH
GPUPACK_TRACE=t1 run R -j 2 --retries 3 --joblog jl sh flaky.sh ::: a b
is "$rc" 0 "a traced farm runs as any"
is "$(grep -c ' start seq=2 ' t1)" 3 "each attempt's start is a line"
is "$(grep -c ' end seq=2 .* exit:7 .* -> retry$' t1)" 2 "a failed attempt: its exit and the verdict retry"
is "$(grep -c ' end seq=2 .* exit:0 .* -> record$' t1)" 1 "the last: record"
is "$(grep -c ' end seq=1 .* -> record$' t1)" 1 "the other task: record, once"
like "$(grep ' end seq=2 ' t1 | head -n 1)" '^ *[0-9]+\.[0-9]{3} end seq=2 pid=[0-9]+ gpu=0 exit:7 ran=[0-9.]+ ' \
	"a line starts with the seconds since the farm began, then what ended where and how"
is "$(awk '{ print $1 }' t1 | sort -n -c 2>&1 && echo sorted)" sorted "lines in time order"

# appended, never truncated: two farms, one file
GPUPACK_TRACE=t1 run R -j 2 sh -c 'exit 0' ::: x
is "$(grep -c ' start seq=' t1)" 5 "a second farm's lines are appended"

# no variable, no file
mkdir quiet && cd quiet || exit 1
run R -j 2 sh ../flaky.sh ::: a
is "$(ls)" runs "without GPUPACK_TRACE nothing is written"
cd .. || exit 1

# refused before anything changes: a path that cannot be opened, a symlink
GPUPACK_TRACE=nodir/t run R --joblog jl2 true ::: 1
is "$rc" 255 "an unwritable GPUPACK_TRACE: exit 255"
one_line "$err" "one line"
like "$err" "GPUPACK_TRACE: cannot open nodir/t: No such file" "it names the variable, the path and why"
ok "$([ ! -e jl2 ] && echo 0 || echo 1)" "no joblog written"
ln -s t1 link
before=$(wc -c <t1)
GPUPACK_TRACE=link run R --joblog jl3 true ::: 1
is "$rc" 255 "a GPUPACK_TRACE that is a symlink: refused"
is "$(wc -c <t1)" "$before" "the file it points to is untouched"
ok "$([ ! -e jl3 ] && echo 0 || echo 1)" "no joblog written"
