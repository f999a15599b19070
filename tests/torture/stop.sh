#!/bin/bash
# tests/torture/stop.sh: random stops of every kind against the farm's promise
# (issue 28): every input ends exactly once in the joblog, whatever stops the
# farm and however often, and nothing the farm started is left running.
#
#   stop.sh [-n TRIALS] [-s SEED] [-o REPORT] [-i twice|torn|left] [--selftest]
#
# A trial: 4 to 12 inputs of 30 to 300 ms, -j 2 to 5, each task a shell that starts a
# grandchild in a session of its own (setsid), runs a probe that logs its start
# and end (tests/tools/farm-probe), then ends the grandchild and exits with the
# probe's status; runs of gpupack on
# one joblog, the first afresh and the others with --resume, each but the last
# stopped at a random moment (within the run's length) in a random way:
#
#   farm     SIGTERM, SIGINT or SIGHUP to gpupack
#   twice    two of them, 50 to 500 ms apart (the second ends the tasks)
#   tasks    a signal (TERM, INT, HUP or KILL) to the running tasks alone: to
#            the probes, or to every process of theirs (as Slurm signals all
#            the processes of a step)
#   both     to gpupack and to its tasks, either first, up to 300 ms apart
#            (Slurm's time limit, scancel, preemption)
#   kill9    SIGKILL to gpupack
#
# then a last --resume that must finish. Checked after each run and trial:
#   lost     an input with no record at the end; a success recorded for a task
#            that never logged its end; a task killed by a stop of gpupack
#            recorded as a failure (it is the stop's: --resume must run it)
#   twice    an input with more than one record
#   torn     a joblog line that is not a whole record, or a joblog that does
#            not end with a newline
#   left     a process of the trial alive 3 s after its gpupack exited
#   errors   a last run that did not exit 0
# (A task killed from outside while gpupack was told nothing failed on its
# own: its record, a failure, is right, as GNU parallel's is.)
#
# -i injects a fault the checks must see: twice (a record copied), torn (half
# a record appended), left (a process left behind). (A record of what a stop
# killed is the lifecycle's to refuse: tests/unit/test_farm_life.c.)
# --selftest runs a few trials of each and fails unless each is seen.
# Exit: 0 when every count is 0 (for -i: when the injected fault was seen).
set -u
HERE=$(cd "$(dirname "$0")/../.." && pwd)
: "${GPUPACK_BUILD:=$HERE/build}"
: "${GPUPACK:=$GPUPACK_BUILD/gpupack}"
PROBE="$GPUPACK_BUILD/tests/tools/farm-probe"
TOPO="$HERE/topologies/h100-80gb.topo"
TRIALS=1000 SEED=$$ REPORT="" INJECT="" SELFTEST=0

while [ $# -gt 0 ]; do
	case $1 in
	-n) TRIALS=$2; shift ;;
	-s) SEED=$2; shift ;;
	-o) REPORT=$2; shift ;;
	-i) INJECT=$2; shift ;;
	--selftest) SELFTEST=1 ;;
	*) echo "usage: $0 [-n TRIALS] [-s SEED] [-o REPORT] [-i twice|torn|left] [--selftest]" >&2; exit 2 ;;
	esac
	shift
done
[ -x "$GPUPACK" ] && [ -x "$PROBE" ] || { echo "stop.sh: build gpupack and tests/tools first" >&2; exit 2; }
# the trials run in directories of their own: the report's path is taken from here
case $REPORT in "" | /*) ;; *) REPORT="$PWD/$REPORT" ;; esac
COMMIT=$(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo '?')
[ -n "$(git -C "$HERE" status --porcelain --untracked-files=no 2>/dev/null)" ] && COMMIT="$COMMIT (and changes)"

if [ "$SELFTEST" = 1 ]; then
	rc=0
	for kind in twice torn left; do
		out=$("$0" -n 12 -s 7 -i "$kind" 2>&1 | tail -n 1)
		if printf '%s' "$out" | grep -q "injected $kind: seen"; then
			echo "selftest: injected $kind: seen ($out)"
		else
			echo "selftest: injected $kind: NOT seen ($out)"
			rc=1
		fi
	done
	exit $rc
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/gpupack-torture.XXXXXX")
trap 'rm -rf "$W"' EXIT
lost=0 twice=0 torn=0 left=0 errors=0 runs=0 stops=0
declare -A kinds=()
t_start=$(date +%s)

# a generator of our own: bash reseeds $RANDOM in subshells, and the trials must replay from -s
rng=$SEED
rnd() { rng=$(((rng * 1103515245 + 12345) % 2147483648)); R=$(((rng >> 8) % $1)); }
pick() { rnd $#; shift "$R"; P=$1; }
msleep() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }

# the processes of this trial (they carry its mark in their environment)
marked() { grep -l "TORTURE_MARK=$mark\$" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | sort -u; }
# pids of the probes running now (started, not ended)
running() { awk '$1 == "start" { p[$4] = $6 } $1 == "end" { delete p[$4] } END { for (s in p) print p[s] }' log 2>/dev/null; }
# what a signal "to the tasks" reaches: the probes alone, or, as Slurm does, every process of
# the trial but gpupack and its watchdog (the shells, the probes, the grandchildren)
victims() {
	local p
	if [ "$1" = probes ]; then running; return; fi
	for p in $(marked); do
		[ "$p" = "$gpid" ] || [ "$(cat /proc/"$p"/comm 2>/dev/null)" = gpupack-guard ] || echo "$p"
	done
}

# one run of gpupack; the stop to make (none, or a kind); sets rc and farm_hit (gpupack was told to stop)
one_run() {
	local resume=$1 kind=$2 sig sig2 tsig delay who
	farm_hit=0
	# the task: a grandchild in a session of its own, the probe, and (ended well) the grandchild
	# ended by the task itself: what is left after a run is what a stop orphaned
	# shellcheck disable=SC2086
	env TORTURE_MARK="$mark" GPUPACK_STATE_DIR="$W/state" \
		"$GPUPACK" --sim "$TOPO" run --share timeslice -j "$jobs" --joblog jl $resume \
		--shell "setsid sleep 30 & g=\$!; $PROBE log {} 0; s=\$?; kill \$g; exit \$s" :::: in \
		>/dev/null 2>>err &
	gpid=$!
	if [ "$kind" != none ]; then
		# a moment within the run's length (startup, then its work over its slots)
		rnd $((60 + work / jobs)) && msleep "$R"
		pick TERM INT HUP && sig=$P
		pick TERM INT HUP && sig2=$P
		pick TERM INT HUP KILL && tsig=$P
		pick probes all && who=$P
		rnd 300 && delay=$R
		case $kind in
		farm) kill -"$sig" $gpid 2>/dev/null; farm_hit=1 ;;
		twice) kill -"$sig" $gpid 2>/dev/null; rnd 450 && msleep $((50 + R)); kill -"$sig2" $gpid 2>/dev/null
			farm_hit=1 ;;
		tasks) # shellcheck disable=SC2046
			kill -"$tsig" $(victims "$who") 2>/dev/null ;;
		both) rnd 2
			# shellcheck disable=SC2046
			if [ "$R" = 0 ]; then
				kill -"$sig" $gpid 2>/dev/null; msleep "$delay"; kill -"$tsig" $(victims "$who") 2>/dev/null
			else
				kill -"$tsig" $(victims "$who") 2>/dev/null; msleep "$delay"; kill -"$sig" $gpid 2>/dev/null
			fi
			farm_hit=1 ;;
		kill9) kill -KILL $gpid 2>/dev/null ;;
		esac
	fi
	wait $gpid 2>/dev/null
	rc=$?
}

# after a run: processes left, and what its new records say
check_run() {
	local from=$1 i=0 p n
	while [ -n "$(marked)" ] && [ $i -lt 60 ]; do sleep 0.05; i=$((i + 1)); done
	if [ "$INJECT" = left ] && [ "$trial" = 1 ]; then
		env TORTURE_MARK="$mark" setsid sleep 60 >/dev/null 2>&1 &
		sleep 0.1
	fi
	n=$(marked | wc -l)
	if [ "$n" -gt 0 ]; then
		left=$((left + n))
		echo "trial $trial run $runs ($kind): $n process(es) left: $(for p in $(marked); do tr "\0" " " </proc/$p/cmdline; echo "[$(awk "{print \$3}" /proc/$p/stat)] ;"; done)" >>"$W/notes"
		for p in $(marked); do kill -9 "$p" 2>/dev/null; done
	fi
	# a stop of gpupack's own: none of its new records may be a task that stop killed
	if [ "$farm_hit" = 1 ]; then
		n=$(tail -n +"$from" jl 2>/dev/null | awk -F'\t' '$8 ~ /^(1|2|9|10|15)$/ || $7 ~ /^(129|130|137|138|143)$/' | wc -l)
		if [ "$n" -gt 0 ]; then
			lost=$((lost + n))
			echo "trial $trial run $runs: $n task(s) the stop killed recorded as failed" >>"$W/notes"
		fi
	fi
}

check_trial() {
	local s r bad
	# torn: every line after the header a whole record, and the file ends with a newline
	bad=$(tail -n +2 jl | awk -F'\t' 'NF < 9 || $1 !~ /^[0-9]+$/ || $3 !~ /^[0-9]+\.[0-9]+$/ ||
		$7 !~ /^-?[0-9]+$/ || $8 !~ /^[0-9]+$/' | wc -l)
	[ -s jl ] && [ "$(tail -c 1 jl | od -An -c | tr -d ' ')" != '\n' ] && bad=$((bad + 1))
	torn=$((torn + bad))
	[ "$bad" -gt 0 ] && echo "trial $trial: $bad torn line(s)" >>"$W/notes"
	for s in $(seq "$n_in"); do
		r=$(awk -F'\t' -v s="$s" 'NR > 1 && $1 == s' jl | wc -l)
		if [ "$r" -eq 0 ]; then
			lost=$((lost + 1))
			echo "trial $trial: input $s has no record" >>"$W/notes"
		elif [ "$r" -gt 1 ]; then
			twice=$((twice + 1))
			echo "trial $trial: input $s has $r records" >>"$W/notes"
		fi
		# a success must be a task that logged its end
		if awk -F'\t' -v s="$s" 'NR > 1 && $1 == s && $7 == 0 && $8 == 0 { f = 1 } END { exit !f }' jl &&
			! awk -v s="$s" '$1 == "end" && $4 == s { f = 1 } END { exit !f }' log; then
			lost=$((lost + 1))
			echo "trial $trial: input $s recorded done, never ended" >>"$W/notes"
		fi
	done
}

for trial in $(seq "$TRIALS"); do
	d="$W/t$trial"
	mkdir -p "$d" && cd "$d" || exit 2
	mark="t$trial.$SEED.$$"
	rnd 9 && n_in=$((4 + R))
	rnd 4 && jobs=$((2 + R))
	work=0
	for _ in $(seq "$n_in"); do rnd 270 && echo $((30 + R)) && work=$((work + 30 + R)); done >in
	rnd 3 && nstops=$((1 + R))
	resume=""
	for k in $(seq 0 "$nstops"); do
		if [ "$k" -lt "$nstops" ]; then pick farm twice tasks both both kill9 && kind=$P; else kind=none; fi
		from=$(($( { wc -l <jl; } 2>/dev/null || echo 0) + 1))
		[ "$from" -lt 2 ] && from=2
		one_run "$resume" "$kind"
		runs=$((runs + 1))
		if [ "$kind" != none ]; then
			stops=$((stops + 1))
			kinds[$kind]=$((${kinds[$kind]:-0} + 1))
		elif [ "$rc" != 0 ]; then
			errors=$((errors + 1))
			echo "trial $trial: the last run exited $rc: $(tail -n 2 err | tr '\n' ' ')" >>"$W/notes"
		fi
		check_run "$from"
		[ -n "${TORTURE_DEBUG:-}" ] && echo "trial $trial run $runs: $kind rc $rc, new: $(tail -n +"$from" jl |
			cut -f1,7,8 | tr '\t\n' ': ')" >&2
		resume=--resume
	done
	if [ "$INJECT" = twice ] && [ "$trial" = 1 ]; then tail -n 1 jl >>jl; fi
	if [ "$INJECT" = torn ] && [ "$trial" = 1 ]; then printf '3\t:\t17' >>jl; fi
	check_trial
	cd "$W" && rm -rf "$d"
	[ $((trial % 50)) = 0 ] && echo "# $trial trials: lost $lost, twice $twice, torn $torn, left $left, errors $errors" >&2
done
t_end=$(date +%s)

summary="seed $SEED: trials $TRIALS, runs $runs, stops $stops ($(for k in farm twice tasks both kill9; do
	printf '%s %s ' "$k" "${kinds[$k]:-0}"; done | sed 's/ $//')): lost $lost, recorded twice $twice, torn $torn,
processes left $left, errors $errors"
if [ -n "$REPORT" ]; then
	{
		echo "# Torture: random stops of the farm (tests/torture/stop.sh)"
		echo
		echo "Date: $(date -u +%Y-%m-%d), gpupack $COMMIT (the tree when the trials began),"
		echo "$(nproc) CPUs (shared with other work; load average at the end $(cut -d' ' -f1-3 /proc/loadavg)),"
		echo "kernel $(uname -r). Command: \`tests/torture/stop.sh -n $TRIALS -s $SEED\` ($((t_end - t_start)) s)."
		echo
		echo "Each trial: 4 to 12 inputs of 30 to 300 ms, -j 2 to 5, each task a probe beside a setsid'd"
		echo "grandchild; 1 to 3 runs stopped at a random moment within the run's length, then a"
		echo "--resume that must finish. The script's header says what each count means."
		echo
		echo "| stop | runs stopped so |"
		echo "|---|---|"
		for k in farm twice tasks both kill9; do echo "| $k | ${kinds[$k]:-0} |"; done
		echo
		echo "| count | |"
		echo "|---|---|"
		echo "| trials | $TRIALS |"
		echo "| runs of gpupack | $runs |"
		echo "| lost | $lost |"
		echo "| recorded twice | $twice |"
		echo "| torn records | $torn |"
		echo "| processes left | $left |"
		echo "| last runs that failed | $errors |"
		if [ -s "$W/notes" ]; then echo; echo '```'; head -n 40 "$W/notes"; echo '```'; fi
	} >"$REPORT"
fi
[ -s "$W/notes" ] && head -n 20 "$W/notes" >&2
echo "$summary"
if [ -n "$INJECT" ]; then
	case $INJECT in
	twice) n=$twice ;; torn) n=$torn ;; left) n=$left ;; *) n=0 ;;
	esac
	if [ "$n" -gt 0 ]; then echo "injected $INJECT: seen ($n)"; exit 0; fi
	echo "injected $INJECT: not seen"
	exit 1
fi
[ $((lost + twice + torn + left + errors)) -eq 0 ]
