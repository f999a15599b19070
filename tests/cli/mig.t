#!/bin/sh
# mig.t: `gpupack mig` on simulated machines of every product in data/mig-profiles.csv:
# profiles as the CSV has them, plans applied and cleared through the simulation backend
# (checked with `devices --json`), rollback after injected failures, refusals when
# processes run, bad input. Plan validity and optimality: tests/unit/test_mig_plan.c, test_mig_node.c.
# shellcheck source=tests/lib.sh disable=SC2154 # rc, out, err: set by run() in lib.sh
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"
CSV="$GPUPACK_SRC/data/mig-profiles.csv"

gp() {
	# shellcheck disable=SC2086 # GPUPACK may be "tests/valgrind-run .../gpupack"
	$GPUPACK "$@"
}

# The geometry of a topology as devices --json shows it: "GPU profile start+size ci-count" lines.
geometry() {
	gp --sim "$1" devices --json | jq -r '.gpus[] | .index as $g | (.gpu_instances // [])[] |
		"\($g) \(.profile) \(.placement.start)+\(.placement.size) ci=\(.compute_instances | length)"' | sort
}

# devices --json without the backend line (it names the file)
state() { gp --sim "$1" devices --json | grep -v '"backend"'; }

# CSV rows of a product: name,slices,bytes,sms,max,placements
csv_rows() {
	awk -F, -v p="$1" '!/^#/ && $1 == p {
		printf "%s,%s,%.0f,%s,%s,%s\n", $4, $5, $6 * 1048576, $7, $8, $9 }' "$CSV" | sort
}

# --- every product of the CSV ---
products=$(awk -F, '!/^#/ && $1 != "gpu" && NF > 8 { print $1 }' "$CSV" | sort -u)
for p in $products; do
	topo="$TOPO/$(printf '%s' "$p" | tr '[:upper:]' '[:lower:]').topo"
	if [ ! -f "$topo" ]; then
		ok 1 "$p: a topology $topo exists"
		continue
	fi
	f="$T/$p.topo"
	cp "$topo" "$f"

	run gp --sim "$f" mig profiles --json
	ok "$rc" "$p: mig profiles --json exits 0"
	got=$(printf '%s' "$out" | jq -r '.gpus[0].profiles[] |
		"\(.name),\(.slices),\(.memory_bytes),\(.sms),\(.max_count),\([.placements[] | "\(.start)+\(.size)"] | join(" "))"' | sort)
	is "$got" "$(csv_rows "$p")" "$p: profiles match the CSV rows"

	# the smallest profile, and memory a bit above it (needs the next size up)
	small=$(awk -F, -v p="$p" '!/^#/ && $1 == p && $4 !~ /\+/ { print $6, $4 }' "$CSV" | sort -n | head -1 | cut -d' ' -f2)
	mib=$(awk -F, -v p="$p" '!/^#/ && $1 == p { print $6 }' "$CSV" | sort -n | head -1)
	run gp --sim "$f" mig plan --json --want "2x$small" "1x$((mib + 1))M"
	ok "$rc" "$p: mig plan exits 0"
	is "$(printf '%s' "$out" | jq '.satisfied')" "3" "$p: 2x$small and 1x$((mib + 1))M all satisfied"
	plan_geo=$(printf '%s' "$out" | jq -r '.gpus[] | .index as $g | .instances[] | select(.state == "create") |
		"\($g) \(.profile) \(.placement.start)+\(.placement.size) ci=1"' | sort)

	before=$(state "$f")
	run gp --sim "$f" mig apply --dry-run --want "2x$small" "1x$((mib + 1))M"
	ok "$rc" "$p: apply --dry-run exits 0"
	like "$out" "^# MIG mode is disabled on GPU 0" "$p: dry-run says MIG is off"
	is "$(printf '%s\n' "$out" | grep -c '^create gpu-instance ')" "3" "$p: dry-run prints 3 creates"
	is "$(state "$f")" "$before" "$p: dry-run changed nothing"

	run gp --sim "$f" mig apply --want "2x$small" "1x$((mib + 1))M"
	is "$rc" "2" "$p: apply with MIG off and no --enable-mig refused"
	one_line "$err" "$p: ... one line"
	is "$(state "$f")" "$before" "$p: ... nothing changed"

	GPUPACK_SIM_FAIL=create-ci:3 run gp --sim "$f" mig apply --enable-mig --want "2x$small" "1x$((mib + 1))M"
	is "$rc" "3" "$p: injected create-ci failure: exit 3"
	one_line "$err" "$p: ... one line"
	like "$err" "rolled back" "$p: ... says it rolled back"
	is "$(state "$f")" "$before" "$p: ... the machine is as it was (MIG mode too)"

	run gp --sim "$f" mig apply --enable-mig --want "2x$small" "1x$((mib + 1))M"
	ok "$rc" "$p: apply --enable-mig exits 0"
	is "$(geometry "$f")" "$plan_geo" "$p: devices --json shows the planned instances"

	run gp --sim "$f" mig clear
	ok "$rc" "$p: clear exits 0"
	is "$(geometry "$f")" "" "$p: no instances left"
done

# --- a MIG-enabled H100 with idle instances: reuse, destroy, plan files ---
f="$T/h100-mig.topo"
cp "$TOPO/h100-80gb-mig.topo" "$f"
orig=$(geometry "$f")
run gp --sim "$f" mig plan --json --want 2x3g.40gb --save "$T/plan"
ok "$rc" "h100-mig: plan 2x3g.40gb with --save"
is "$(printf '%s' "$out" | jq -r '[.gpus[0].instances[].state] | sort | join(",")')" \
	"create,destroy,destroy,destroy,reuse" "h100-mig: reuses the idle 3g, destroys the three in the way"
is "$(head -1 "$T/plan")" "gpupack-mig-plan 1" "plan file header"

GPUPACK_SIM_FAIL=create-gi:1 run gp --sim "$f" mig apply "$T/plan"
is "$rc" "3" "h100-mig: injected create-gi failure after 3 destroys: exit 3"
like "$err" "^gpupack: mig apply: create gpu-instance 3g.40gb at 0\+4 on GPU 0" "... names the failed operation"
is "$(geometry "$f")" "$orig" "... rollback recreated the destroyed instances at their placements"

run gp --sim "$f" mig apply "$T/plan"
is "$rc" "2" "the driver gave the recreated instances new ids: the plan file is stale, exit 2"
run gp --sim "$f" mig plan --want 2x3g.40gb --save "$T/plan"
run gp --sim "$f" mig apply "$T/plan"
ok "$rc" "h100-mig: apply PLAN_FILE exits 0"
is "$(geometry "$f")" "$(printf '0 3g.40gb 0+4 ci=1\n0 3g.40gb 4+4 ci=1')" "... two 3g.40gb now"
run gp --sim "$f" mig apply "$T/plan"
is "$rc" "2" "the same plan file again is stale: exit 2"
like "$err" "stale" "... says so"

printf 'gpupack-mig-plan 1\ngpu GPU-nope\ncreate 1g.10gb 0+1\n' >"$T/bad-plan"
run gp --sim "$f" mig apply "$T/bad-plan"
is "$rc" "2" "plan file naming another GPU: exit 2"
printf 'gpupack-mig-plan 1\ncreate 1g.10gb 0+1\n' >"$T/bad-plan"
run gp --sim "$f" mig apply "$T/bad-plan"
is "$rc" "2" "plan file with an operation before 'gpu': exit 2"
like "$err" "bad-plan:2: " "... error names file:line"

# --- processes: busy instances are never touched ---
f="$T/busy.topo"
cp "$TOPO/h100-80gb-mig-busy.topo" "$f"
before=$(state "$f")
run gp --sim "$f" mig clear
is "$rc" "3" "clear with processes: exit 3"
one_line "$err" "... one line"
like "$err" "4242.*4243" "... names the pids"
is "$(state "$f")" "$before" "... nothing destroyed"
run gp --sim "$f" mig plan --json --want 1x3g.40gb
is "$(printf '%s' "$out" | jq '.satisfied')" "0" "busy: no 3g fits (0+4 would cover the busy 1g at 2+1)"
is "$(printf '%s' "$out" | jq '[.gpus[0].instances[] | select(.state == "busy")] | length')" "2" \
	"... both busy instances stay in the plan"
run gp --sim "$f" mig apply --want 1x1g.20gb
ok "$rc" "busy: apply 1x1g.20gb exits 0"
is "$(geometry "$f" | tr '\n' ';')" "0 1g.10gb 2+1 ci=1;0 1g.10gb 3+1 ci=1;0 1g.20gb 0+2 ci=1;0 3g.40gb 4+4 ci=1;" \
	"... the idle 2g at 0+2 replaced by a 1g.20gb, the busy ones untouched"

# --- requests, over capacity, MPS sharing ---
f="$T/h100.topo"
cp "$TOPO/h100-80gb.topo" "$f"
run gp --sim "$f" mig plan --want 9x1g.10gb
ok "$rc" "over capacity is not an error"
like "$out" "plan: 7 of 9 requests satisfied" "... 7 of 9"
like "$out" "unsatisfied:" "... the rest listed"
like "$out" "no room left" "... with why"
printf '# class: count memory share\n4 4G 0.05\n\n2 4G   # no share\n' >"$T/req"
run gp --sim "$f" mig plan --json --requests "$T/req"
ok "$rc" "requests file"
is "$(printf '%s' "$out" | jq '.satisfied')" "6" "... all six"
is "$(printf '%s' "$out" | jq '[.units[] | .mps_memory_limit_bytes] | unique | .[0]')" "$((4096 * 1048576 + 528 * 1048576))" \
	"... sharing units get a memory limit of 4 GiB and the context (528 MiB)"
like "$(printf '%s' "$out" | jq -c '[.units[] | .mps_thread_percentage] | unique')" "^\[[0-9]" \
	"... and thread percentages"
run gp --sim "$f" mig plan --want 1x200G
ok "$rc" "1x200G: exit 0"
like "$out" "more memory than any profile" "... unsatisfied: too big"
# a job that misses a profile by its CUDA context (528 MiB a job) is told so, with the profile that holds it
run gp --sim "$f" mig plan --want 4x10G --want 1x40G
ok "$rc" "4x10G and 1x40G on an H100: exit 0"
like "$out" "plan: 4 of 5 requests satisfied" "... 4 of 5 (the four 10G jobs take the GPU's four 1g.20gb)"
like "$out" "1x40G unit 1: no room left for a 7g.80gb, the smallest profile that holds 40 GiB and its 528 MiB CUDA context \(a 3g.40gb has 39.5 GiB\)" \
	"... the 40G job needs a 7g.80gb: a 3g.40gb holds 39.5 GiB, less than 40 GiB and its context"
run gp --sim "$f" mig plan --want 2x39G
like "$out" "2x39G unit 2: no room left for a 7g.80gb; 39 GiB would fit a 3g.40gb \(39.5 GiB\) but for its 528 MiB CUDA context" \
	"2x39G: the second misses a 3g.40gb only by its context, and is told which profile holds it"
run gp --sim "$f" mig plan --json --want 2x39G
like "$(printf '%s' "$out" | jq -r '.units[1].reason')" "but for its 528 MiB CUDA context" "... the JSON's reason too"
run gp --sim "$f" mig plan --want 4x1g.10gb --want 1x3g.40gb
like "$out" "plan: 5 of 5 requests satisfied" "... naming the profiles places all five (10G and its context miss a 1g.10gb too)"

# --- bad input ---
for bad in 3x9g.10gb 0x1g.10gb 4x-1G 4x0G x4 4x; do
	run gp --sim "$f" mig plan --want "$bad"
	is "$rc" "2" "plan --want $bad: exit 2"
	one_line "$err" "... one line"
done
run gp --sim "$f" mig plan --gpu '' --want 1x1g.10gb
is "$rc" "2" "--want with no GPU selected: exit 2"
run gp --sim "$f" mig plan
is "$rc" "2" "plan without requests: exit 2"
printf '1 4G\n2 4G 7\n' >"$T/req"
run gp --sim "$f" mig plan --requests "$T/req"
is "$rc" "2" "requests file with a share of 7: exit 2"
like "$err" "req:2: " "... names file:line"
run gp --sim "$f" mig frob
is "$rc" "2" "unknown subcommand: exit 2"
run gp --sim "$f" mig plan --help
like "$out" "satisfy the most requests" "--help states the objective"

# --- root ---
if [ "$(id -u)" -ne 0 ]; then
	run gp mig apply --want 1x1g.10gb
	is "$rc" "3" "apply as a normal user: exit 3"
	is "$err" "gpupack: mig apply: needs root (MIG instances are changed through the driver as root)" \
		"... one line: needs root, the command named once"
elif command -v setpriv >/dev/null 2>&1 && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	# shellcheck disable=SC2086
	run setpriv --reuid=65534 --regid=65534 --clear-groups $GPUPACK mig apply --want 1x1g.10gb
	is "$rc" "3" "apply as nobody (no --sim): exit 3"
	is "$err" "gpupack: mig apply: needs root (MIG instances are changed through the driver as root)" \
		"... one line: needs root, the command named once"
	# shellcheck disable=SC2086
	run setpriv --reuid=65534 --regid=65534 --clear-groups $GPUPACK mig clear
	is "$rc" "3" "clear as nobody: exit 3"
else
	ok 0 "# SKIP no way to drop root here"
fi

# --- --sim changes a copy in the state directory; --sim-write the file itself ---
f="$T/cow.topo"
cp "$TOPO/h100-80gb.topo" "$f"
before=$(cksum <"$f")
run gp --sim "$f" mig apply --enable-mig --want 2x1g.10gb
is "$rc" "0" "--sim: apply succeeds"
is "$(cksum <"$f")" "$before" "--sim: the topology file itself is unchanged"
is "$(find "$GPUPACK_STATE_DIR/sim" -name 'cow-*.topo' | wc -l | tr -d ' ')" "1" \
	"--sim: the changes are in one copy in the state directory"
is "$(stat -c %a "$GPUPACK_STATE_DIR/sim")" "700" "... whose directory is private"
is "$(geometry "$f" | wc -l | tr -d ' ')" "2" "--sim: a later command on the same file sees the changes"
GPUPACK_SIM="$f" run gp devices --json
like "$out" '"mig_current": *"enabled"' "GPUPACK_SIM: sees the same copy"
run gp --sim "$f" mig clear
is "$(geometry "$f")" "" "--sim: clear works on the copy"
run gp --sim "$f" mig apply --want 1x3g.40gb
printf '# edited\n' >>"$f"
is "$(geometry "$f")" "" "--sim: a file edited since is a fresh machine (the old copy is left)"
shipped=$(cksum <"$TOPO/h100-80gb-mig.topo")
run gp --sim "$TOPO/h100-80gb-mig.topo" mig clear
is "$rc" "0" "--sim on a shipped topology: clear succeeds"
is "$(cksum <"$TOPO/h100-80gb-mig.topo")" "$shipped" "... and the shipped file is unchanged"
is "$(geometry "$TOPO/h100-80gb-mig.topo")" "" "... while later commands see the cleared copy"
g="$T/inplace.topo"
cp "$TOPO/h100-80gb.topo" "$g"
run gp --sim-write "$g" mig apply --enable-mig --want 1x3g.40gb
is "$rc" "0" "--sim-write: apply succeeds"
grep -q '^  gi id=.* profile=3g.40gb' "$g"
ok $? "--sim-write: the file itself now has the instance"
is "$(find "$GPUPACK_STATE_DIR/sim" -name 'inplace-*.topo' | wc -l | tr -d ' ')" "0" "... and no copy was made"
GPUPACK_SIM_WRITE="$g" run gp mig clear
is "$rc" "0" "GPUPACK_SIM_WRITE: clear succeeds"
grep -q '^  gi ' "$g"
ok $((1 - $?)) "... on the file itself"
run gp --sim "$g" --sim-write "$g" devices
is "$rc" "2" "--sim and --sim-write together: exit 2"
GPUPACK_SIM="$g" GPUPACK_SIM_WRITE="$g" run gp devices
is "$rc" "2" "GPUPACK_SIM and GPUPACK_SIM_WRITE together: exit 2"

# --- --effort: a longer search for the proof, the same plan for the same N ---
# the bench generator's seed 5, A100 mix 6 (8 GPUs, one busy instance, 50 requests, 33 fit):
# the default budget stops at the waste level (151.56 GiB), 10 times it proves a better plan
# optimal (148.56 GiB, 0.3 s). If a later planner proves this one at effort 1, pick a mix it
# does not (the bench's unproven ones are in bench/results/mig-plan.md). Written by the
# bench's own generator.
MIG_PLAN_BENCH_SEED=5 MIG_PLAN_BENCH_DUMP="$T" MIG_PLAN_BENCH_ONLY=6 "$TOOLS/mig_plan_bench" "$CSV" A100-40GB 8 50 20 0 1 >/dev/null
e="$T/A100-40GB-6"
run gp --sim "$e.topo" mig plan --requests "$e.req"
is "$rc" "0" "--effort: the default budget plans the mix"
like "$out" "not proven optimal \(search budget reached; --effort N searches longer\): none satisfies more, none wastes less than [0-9.]+ GiB" \
	"... not proven optimal at the waste level, and says what searches longer"
run gp --sim "$e.topo" mig plan --requests "$e.req" --effort 10 --json
is "$rc" "0" "--effort 10: exit 0"
is "$(printf '%s' "$out" | jq -r .optimal)" "true" "... proven optimal"
p5=$(printf '%s' "$out" | jq -c '[.satisfied, .waste_bytes, .sms, .operation_count]')
run gp --sim "$e.topo" mig plan --requests "$e.req" --effort 10 --json
is "$(printf '%s' "$out" | jq -c '[.satisfied, .waste_bytes, .sms, .operation_count]')" "$p5" "... the same plan again"
run gp --sim "$e.topo" mig apply --dry-run --requests "$e.req" --effort 10
is "$rc" "0" "apply --dry-run --effort 10: exit 0"
for bad in 0 1001 -3 x 2.5 "" 5x 99999999999999999999; do
	before=$(cksum <"$e.topo")
	run gp --sim "$e.topo" mig plan --requests "$e.req" --effort "$bad"
	is "$rc" "2" "--effort '$bad': exit 2"
	is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" "1" "... one line"
	like "$err" "^gpupack: mig plan: --effort: .*(not a number|not a whole number|out of range \(1 to 1000\))" "... naming the option and why"
done
run gp --sim "$e.topo" mig clear --dry-run --effort 5
is "$rc" "2" "clear --effort: exit 2 (clear plans nothing)"
run gp --sim "$e.topo" mig profiles --effort 5
is "$rc" "2" "profiles --effort: exit 2"
printf 'gpu 0\n' >"$T/plan.txt"
run gp --sim "$e.topo" mig apply --dry-run --effort 5 "$T/plan.txt"
is "$rc" "2" "apply PLAN_FILE --effort: exit 2 (a plan file is applied as it is)"
like "$err" "--effort plans requests" "... saying why"
