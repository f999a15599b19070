#!/bin/sh
# stress-check.sh: make check, RUNS times in a row (10), beside HOGS busy loops (2) that
# keep CPUs busy the whole time: a suite that passes only on a quiet machine fails here.
# The first run starts from make clean (-c: every run). Each run's output is kept in
# DIR/run-N.log; DIR/summary.log has one line per run (its wall seconds and the suite's
# summary line) and a last line: how many passed. Exit 0 only when every run passed.
#
#   tests/stress-check.sh [-n RUNS] [-k HOGS] [-c] [-d DIR] [MAKE ARGS...]
#
# DIR defaults to $OUT/stress-check where $OUT is set, else stress-check.<date> here.
set -u
runs=10 hogs=2 clean_each=0 dir=
while getopts n:k:cd: o; do
	case $o in
	n) runs=$OPTARG ;;
	k) hogs=$OPTARG ;;
	c) clean_each=1 ;;
	d) dir=$OPTARG ;;
	*) echo "usage: tests/stress-check.sh [-n RUNS] [-k HOGS] [-c] [-d DIR] [MAKE ARGS...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
cd "$(dirname "$0")/.." || exit 1
[ -n "$dir" ] || dir=${OUT:+$OUT/stress-check}
[ -n "$dir" ] || dir=stress-check.$(date +%Y%m%d-%H%M%S)
mkdir -p "$dir" || exit 1
sum="$dir/summary.log"

pids=
stop_hogs() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	pids=
}
trap 'stop_hogs' EXIT
trap 'stop_hogs; exit 130' INT TERM
i=0
while [ $i -lt "$hogs" ]; do
	sh -c 'while :; do :; done' &
	pids="$pids $!"
	i=$((i + 1))
done

{
	echo "# make check x $runs beside $hogs busy loops, $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "# $(git log -1 --format='%h %s' 2>/dev/null)"
} >"$sum"
passed=0 n=1
while [ $n -le "$runs" ]; do
	[ $n = 1 ] || [ $clean_each = 1 ] && make -s clean >/dev/null 2>&1
	log="$dir/run-$n.log"
	t0=$(date +%s.%N)
	make check TEST_FLAGS=--timer "$@" >"$log" 2>&1
	rc=$?
	t=$(echo "$(date +%s.%N) - $t0" | bc)
	last=$(grep -E '^(PASS|FAIL): ' "$log" | tail -n 1)
	[ -n "$last" ] || last="make check exited $rc: $(tail -n 1 "$log")"
	[ $rc = 0 ] && passed=$((passed + 1))
	printf 'run %2d  %6.0f s  %s\n' "$n" "$t" "$last" | tee -a "$sum"
	n=$((n + 1))
done
echo "$passed of $runs runs passed" | tee -a "$sum"
[ $passed = "$runs" ]
