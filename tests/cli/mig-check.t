#!/bin/bash
# mig-check.t: `gpupack mig plan` against an independent check (tests/tools/mig_check.py,
# written apart from the planner: the geometry rules as an integer program solved by
# scipy's HiGHS, or an exhaustive search for tiny inputs) on every topology in topologies/:
#   - small mixes on one-GPU topologies: the plan equals the exhaustive optimum and the
#     integer program's, and the planner proves it optimal itself;
#   - larger mixes (several GPUs, busy and idle instances): where the integer program
#     finishes, the plan equals its optimum level by level (and is never beaten); where
#     it runs out of nodes, the levels it proved: at least the most units (a check that
#     finished no level fails; so does a check whose solver failed: mig_check.py exits 3).
# Mixes are random with fixed seeds (named profiles, memory sizes, small shared jobs with
# compute shares). Under the sanitizers (make check's second pass): every mix, each plan the
# plain build's.
# shellcheck source=tests/lib.sh disable=SC2154,SC2086 # rc, out, err: set by run() in lib.sh; $LIMIT splits
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"
CHECK="$GPUPACK_SRC/tests/tools/mig_check.py"

# a python3 with scipy.optimize.milp (Debian's python3-scipy; .ci/run installs it)
PY=
for p in /usr/bin/python3 python3; do
	if "$p" -c 'from scipy.optimize import milp' 2>/dev/null; then
		PY=$p
		break
	fi
done
if [ -z "$PY" ]; then
	# CI must run this check: there a missing scipy is a failure, not a skip
	if [ -n "${CI:-}" ]; then
		ok 1 "python3 with scipy.optimize.milp (python3-scipy) is installed"
	else
		echo "# SKIP: no python3 with scipy.optimize.milp (apt-get install python3-scipy)"
	fi
	exit 0
fi

# the integer program stops by branch-and-bound nodes, not time: the same answer on a busy
# machine as on a quiet one (the time limit is a backstop no check comes near)
LIMIT="--node-limit 10000 --time-limit 900"

# make check's sanitizer pass (GPUPACK_TEST_PASS=san, with build-san's gpupack): every mix,
# each plan the same as the plain build's (build/, which the first pass checks against
# mig_check.py); without that build, one mix a topology against mig_check.py
many=1 PLAIN=
if [ "${GPUPACK_TEST_PASS:-}" = san ]; then
	PLAIN=${GPUPACK_BUILD%-san}/gpupack
	if [ "$PLAIN" = "$GPUPACK_BUILD/gpupack" ] || [ ! -x "$PLAIN" ]; then
		PLAIN=''
		many=0
	fi
fi

# The checks are asked in one batch (mig_check.py --batch: Python and scipy start once):
# ask ARGS... queues one, its answer is line $asked (from 1) of $T/answers once asked_all ran.
asked=0
: >"$T/batch"
ask() {
	printf '%s\n' "$*" >>"$T/batch"
	asked=$((asked + 1))
}
asked_all() {
	"$PY" "$CHECK" --batch <"$T/batch" >"$T/answers" 2>"$T/check.err"
	is "$?" 0 "mig_check.py answered the batch of $asked checks ($(tail -n 1 "$T/check.err"))"
}
# check WHAT N: answer N in $chk; a failed check (its solver failed, exit 3) is a failed test
check() {
	line=$(sed -n "$2p" "$T/answers")
	chk=$(printf '%s' "$line" | jq -c .answer)
	crc=$(printf '%s' "$line" | jq -r .exit)
	[ "$crc" = 0 ]
	ok $? "$1: the check answers (exit $crc$([ "$crc" != 0 ] && printf ': %s' "$(tr '\n' ' ' <"$T/check.err")"))"
}

# a solver that calls every model infeasible (as scipy 1.10's presolve does bench mix 4 on 8
# A100s) must make the check fail loudly, not answer: one line, exit 3, status error
printf '1 8G\n' >"$T/req"
out=$(MIG_CHECK_SOLVER_FAILS=1 "$PY" "$CHECK" --time-limit 10 "$TOPO/h100-80gb.topo" "$T/req" 2>"$T/check.err")
is "$?" "3" "a solver that says infeasible on a feasible model: mig_check.py exits 3"
is "$(printf '%s' "$out" | jq -r .status)" "error" "... its answer is an error, not a plan"
like "$(tail -1 "$T/check.err")" "^mig_check.py: level 1: the solver failed on a feasible model" "... and it says why"

gp() {
	# shellcheck disable=SC2086 # GPUPACK may be "tests/valgrind-run .../gpupack"
	$GPUPACK "$@"
}

# mix TOPOLOGY SEED UNITS: a request file of about UNITS jobs in 1 to 4 classes on stdout
mix() {
	awk -v seed="$2" -v units="$3" '
		/^ *profile / {
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^name=/) name = substr($i, 6)
				if ($i ~ /^memory=/) { m = substr($i, 8); sub(/MiB/, "", m) }
			}
			if (name !~ /\+me$/ && !(name in seen)) { seen[name] = 1; names[n++] = name }
			if (m + 0 > most) most = m + 0
			if (least == 0 || m + 0 < least) least = m + 0
		}
		END {
			srand(seed)
			left = units
			for (c = 0; left > 0 && c < 4; c++) {
				k = (c == 3) ? left : 1 + int(rand() * left / 2)
				left -= k
				r = rand()
				if (r < 0.3) {
					r = rand()
					print k, names[int(r * r * n)]
				} else if (r < 0.65) {
					mib = 1024 * (1 + int(rand() * ((most - 528) / 3072)))
					print k, mib "M" (rand() < 0.5 ? "" : " 0." int(1 + rand() * 4))
				} else {
					mib = 512 * (1 + int(rand() * ((least - 528) / 512 - 1)))
					if (mib < 512) mib = 512
					print k, mib "M" (rand() < 0.5 ? "" : " 0.0" int(1 + rand() * 9))
				}
			}
		}' "$1"
}

# levels JSON: "satisfied waste sms ops" of a planner or checker answer
levels() { printf '%s' "$1" | jq -r '"\(.satisfied) \(.waste_bytes) \(.sms) \(.operation_count)"'; }

# better A B: is the score "sat waste sms ops" A lexicographically better than B?
better() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		if (x[1] != y[1]) exit !(x[1] > y[1])
		for (i = 2; i <= 4; i++) if (x[i] != y[i]) exit !(x[i] < y[i])
		exit 1 }'
}

# same_as_plain TOPOLOGY WHAT: in the sanitizer pass, the plan in $out is the plain build's
same_as_plain() {
	[ -n "$PLAIN" ] || return 1
	is "$out" "$("$PLAIN" --sim "$1" mig plan --requests "$T/req.$k" --json)" "$2: the plan under the sanitizers is the plain build's"
	return 0
}

# the mixes: the planner's answers now, the checks asked in one batch
k=0
declare -a MIXES
for topo in "$TOPO"/*.topo; do
	name=$(basename "$topo" .topo)
	ngpus=$(grep -c '^gpu ' "$topo")
	# small: one GPU, up to 3 jobs, exhaustive and integer program
	if [ "$ngpus" -eq 1 ]; then
		for seed in 1 2 3; do
			[ "$many" -eq 0 ] && [ "$seed" -gt 1 ] && break
			mix "$topo" "$seed" 3 >"$T/req.$k"
			run gp --sim "$topo" mig plan --requests "$T/req.$k" --json
			printf '%s' "$out" >"$T/plan.$k"
			same_as_plain "$topo" "$name seed $seed" && continue
			MIXES[k]="small $name $seed $((asked + 1))"
			ask --exhaustive "$topo" "$T/req.$k"
			ask $LIMIT "$topo" "$T/req.$k"
			k=$((k + 1))
		done
	fi
	# larger: more jobs (fewer on the 8-GPU machine, where the integer program is slow)
	units=10
	[ "$ngpus" -ge 8 ] && units=5
	for seed in 11 12; do
		[ "$many" -eq 0 ] && [ "$seed" -gt 11 ] && break
		mix "$topo" "$((seed * 7 + ngpus))" "$units" >"$T/req.$k"
		run gp --sim "$topo" mig plan --requests "$T/req.$k" --json
		printf '%s' "$out" >"$T/plan.$k"
		same_as_plain "$topo" "$name seed $seed" && continue
		MIXES[k]="large $name $seed $((asked + 1))"
		ask $LIMIT "$topo" "$T/req.$k"
		k=$((k + 1))
	done
done
[ -n "$PLAIN" ] && exit 0
asked_all

compared=0
for ((c = 0; c < k; c++)); do
	read -r size name seed a <<<"${MIXES[c]}"
	out=$(cat "$T/plan.$c")
	plan=$(levels "$out")
	proven=$(printf '%s' "$out" | jq -r .optimal)
	if [ "$size" = small ]; then
		check "$name seed $seed, exhaustive" "$a"
		exh=$(levels "$chk")
		check "$name seed $seed, integer program" "$((a + 1))"
		ilp=$(levels "$chk")
		is "$plan" "$exh" "$name seed $seed: plan equals the exhaustive optimum ($(tr '\n' ',' <"$T/req.$c"))"
		is "$ilp" "$exh" "$name seed $seed: ... and the integer program's"
		is "$proven" true "$name seed $seed: ... and the planner proved it optimal"
		compared=$((compared + 1))
		continue
	fi
	check "$name seed $seed, integer program" "$a"
	if [ "$(printf '%s' "$chk" | jq -r .status)" = optimal ]; then
		ilp=$(levels "$chk")
		better "$ilp" "$plan"
		ok $((1 - $?)) "$name seed $seed: the integer program does not beat the plan ($plan vs $ilp)"
		if [ "$proven" = true ]; then
			is "$plan" "$ilp" "$name seed $seed: ... and the plan proven optimal equals its optimum"
		fi
		compared=$((compared + 1))
	else
		# out of nodes: the levels it proved; at least the most units, or the check says nothing
		sat=$(printf '%s' "$chk" | jq -r '.satisfied')
		[ "$sat" != null ] && [ "${plan%% *}" -ge "$sat" ]
		ok $? "$name seed $seed: the integer program (out of nodes) proved the most units, no more than the plan's ($sat)"
	fi
done
[ "$compared" -gt 0 ]
ok $? "some plans were compared with a finished independent check ($compared)"
