#!/bin/sh
# shellcheck disable=SC2016 # the tasks' own $VARS are literal
# run-output-resume.t: output is part of a task, also across a kill -9 and
# --resume (issue 42's defects 6 and 7). --results FILE.csv (.tsv, .json)
# keeps the rows of the tasks the joblog ended and appends the rest;
# --results DIR writes each file under a temporary name, renamed at the
# task's end, so a killed task's half-written files never read as done.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

cd "$T" || exit 1
R() { $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }
records() { awk -F'\t' 'NR > 1 { print $1 }' "$1" | sort -n | uniq | wc -l | tr -d ' '; }
# wait_records JOBLOG N: until the joblog holds N records (at most 20 s)
wait_records() {
	i=0
	while [ "$(grep -c '^[0-9]' "$1" 2>/dev/null || echo 0)" -lt "$2" ] && [ $i -lt 1000 ]; do
		sleep 0.02
		i=$((i + 1))
	done
}

# ---- --results FILE.csv / .tsv / .json across kill -9 and --resume ---------------------------
for ext in csv tsv json; do
	rm -rf jl* res.*
	CMD='printf "out %s\nline two, \"quoted\"\n" {}; sleep 0.0$(( {} % 5 ))'
	$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 4 --joblog jl --results res.$ext \
		--shell "$CMD" ::: $(seq 60) >/dev/null 2>&1 &
	gpid=$!
	wait_records jl 20
	kill -9 $gpid
	wait $gpid 2>/dev/null
	before=$(records jl)
	run R -j 4 --joblog jl --resume --results res.$ext --shell "$CMD" ::: $(seq 60)
	is "$rc:$(records jl)" "0:60" "$ext: killed after $before, --resume ends all 60"
	[ "$rc" = 0 ] || diag "$err"
	case $ext in
	json) rows=$(jq -r '.Seq' res.json | sort -n | uniq -c | awk '$1 != 1 {bad++} END {print NR ":" bad + 0}') ;;
	*) rows=$(python3 -c '
import csv, sys, collections
d = "\t" if sys.argv[1].endswith("tsv") else ","
r = list(csv.reader(open(sys.argv[1], newline=""), delimiter=d))
c = collections.Counter(x[0] for x in r[1:])
print("%d:%d" % (len(c), sum(1 for v in c.values() if v != 1)) if r[0][0] == "Seq" else "no header")' res.$ext) ;;
	esac
	is "$rows" "60:0" "$ext: the earlier rows kept, each input once"
	run R -j 4 --joblog jl --resume --results res.$ext --shell "$CMD" ::: $(seq 60)
	case $ext in
	json) n=$(wc -l <res.json | tr -d ' ') ;;
	*) n=$(python3 -c 'import csv, sys; d = "\t" if sys.argv[1].endswith("tsv") else ","; print(len(list(csv.reader(open(sys.argv[1], newline=""), delimiter=d))) - 1)' res.$ext) ;;
	esac
	is "$rc:$n" "0:60" "$ext: nothing left to run: the file stays whole"
done
# a row whose task has no record (killed between the two) and a torn last row go
rm -rf jl* res.csv
R --joblog jl --results res.csv echo ::: a b c >/dev/null 2>&1
sed -i '$d' jl
printf '99,:,1,1,0,0,0,0,"echo x",x,"x\n' >>res.csv
run R --joblog jl --resume --results res.csv echo ::: a b c
# (the tasks end in any order: the rows are compared as a set, the header first)
is "$(python3 -c 'import csv; r = [x[0] for x in csv.reader(open("res.csv", newline=""))]; print(" ".join(r[:1] + sorted(r[1:])))')" \
	"Seq 1 2 3" "a row without a record and a torn row are dropped; the task runs again"

# ---- --results DIR without a joblog: kill -9 midway, --resume -----------------------------------
rm -rf res ran
# each task writes a line, sleeps, writes another: killed midway, its stdout is half-written
CMD='echo {} >>ran; echo first {}; sleep 0.$(( {} % 4 + 1 )); echo second {}'
$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 6 --results res --shell "$CMD" ::: $(seq 40) \
	>/dev/null 2>&1 &
gpid=$!
i=0
while [ "$(find res -name stdout 2>/dev/null | wc -l)" -lt 8 ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i + 1)); done
kill -9 $gpid
wait $gpid 2>/dev/null
half=$(for d in res/1/*; do [ -f "$d/stdout" ] && [ "$(wc -l <"$d/stdout")" -ne 2 ] && echo "$d"; done | wc -l)
is "$half" 0 "killed midway: no stdout file is half-written (a task's files take their names at its end)"
run $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 6 --resume --results res --shell "$CMD" ::: $(seq 40)
is "$rc" 0 "--resume --results DIR runs the rest"
whole=$(for d in res/1/*; do [ "$(cat "$d/stdout" 2>/dev/null)" = "$(printf 'first %s\nsecond %s' "${d##*/}" "${d##*/}")" ] && echo ok; done | wc -l)
is "$whole" 40 "every input's stdout whole"
is "$(find res -name '.*.gpupack' | wc -l)" 0 "no temporary file left"
