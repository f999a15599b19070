#!/bin/sh
# shellcheck disable=SC2016 # the tasks' own $(...) is literal
# run-owners.t: every shared thing has one owner, by identity, not by name.
# One farm per joblog whatever name reaches it (a symlink, a hard link, a
# removed FILE.lock); a farm started with its standard descriptors closed
# keeps its tasks' output (issue 42's defects 4 and 5).
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

PROBE="$TOOLS/farm-probe"
cd "$T" || exit 1
R() { $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }
records() { awk -F'\t' 'NR > 1 { print $1 }' "$1" | sort -n | tr '\n' ' '; }
# start_first JOBLOG: a farm of 2 probes of 30 s on it, in the background ($gpid); waits for both to start
start_first() {
	rm -f log
	echo 30000 >ms
	$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -j 2 --joblog "$1" "$PROBE" log '$(cat ms)' 0 \
		::: 1 2 3 >/dev/null 2>&1 &
	gpid=$!
	i=0
	while n=$(grep -c '^start' log 2>/dev/null); [ "${n:-0}" -lt 2 ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
}
stop_first() {
	kill -9 "$gpid"
	wait "$gpid" 2>/dev/null
}

# ---- one farm per joblog, by identity ---------------------------------------------------------
for how in symlink hardlink nolock; do
	rm -rf jl* other*
	start_first jl
	case $how in
	symlink) ln -s jl other ;;
	hardlink) ln jl other ;;
	nolock) rm -f jl.lock; ln -s jl other ;;
	esac
	echo 10 >ms
	run R -j 2 --joblog other --resume "$PROBE" log '$(cat ms)' 0 ::: 1 2 3
	is "$rc:$(printf '%s\n' "$err" | wc -l)" "255:1" "$how: a second farm on the same joblog is refused, one line"
	like "$err" "^gpupack: run: --joblog 'other': another farm runs on it \\(gpupack pid $gpid( .*)?\\); wait" \
		"$how: it names the farm that runs"
	is "$(grep -c '^start' log)" 2 "$how: and ran nothing"
	stop_first
done
# a refused run leaves no joblog it made: a new name, a farm that cannot start (no such GPU)
rm -rf jl*
run R --gpus 7 --joblog fresh echo ::: a
ok "$([ "$rc" -ne 0 ] && [ ! -e fresh ] && [ ! -e fresh.lock ]; echo $?)" "a run refused before it began leaves no joblog"
run R --joblog fresh echo ::: a
is "$rc:$(records fresh)" "0:1 " "a run that ran keeps it"

# ---- closed standard descriptors (a detached launcher) ----------------------------------------
rm -rf jl*
R --joblog jl echo ::: $(seq 20) >&- 2>&-
is "$?:$(grep -c '^[0-9]' jl)" "0:20" "stdout and stderr closed: all 20 run and recorded"
R --joblog jl2 --results res echo ::: $(seq 5) <&- >&- 2>&-
is "$?:$(grep -c '^[0-9]' jl2):$(cat res/1/3/stdout)" "0:5:3" "all three closed: recorded, --results written"
