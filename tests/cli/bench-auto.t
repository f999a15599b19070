#!/bin/sh
# bench-auto.t: bench/auto.sh without a GPU (FAKE=1: fake-work's farm tasks on a simulated
# device, the fake NVML), one class and one fixed count, with the binaries of this build. What is
# checked is the report: beside -j auto's makespan and the best fixed count's, the farm's bound
# (gpupack run --json's "bound") and each one's makespan over it, from that run's own summary.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

R="$T/auto/auto.md"
RAW="$T/auto/auto-raw"
# CUT=3: the fixed count is not ended early (a loaded machine must not change which runs are
# reported), and fits the budget
run env FAKE=1 NOBUILD=1 BUILD="$GPUPACK_BUILD" CLASSES=gpu MAXFIXED=1 ENERGY=none AUTO2=none CUT=3 \
	BUDGET=600 OUT="$T/auto" bash "$GPUPACK_SRC/bench/auto.sh"
is "$rc" 0 "FAKE=1 auto.sh: succeeds"
[ "$rc" = 0 ] || printf '# %s\n' "$err" | tail -n 20
like "$(cat "$R")" "\| best fixed / auto \| bound, auto \(s\) \| auto / bound \| bound, best fixed \(s\) \| best fixed / bound \|" \
	"the summary has the bound and each one's distance to it"
row=$(grep '^| gpu |' "$R")
col() { printf '%s\n' "$row" | awk -F' *[|] *' -v i="$1" '{ print $(i + 1) }'; }
like "$(col 10)" "^[0-9.]+ \((cpu|gpu|longest task)\)$" "auto's bound: seconds and what limits it ($(col 10))"
like "$(col 12)" "^[0-9.]+ \((cpu|gpu|longest task)\)$" "the best fixed count's bound: seconds and what limits it ($(col 12))"
# each distance is that run's makespan over its bound, as its --json summary says
near() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > 0 && b > 0 && (a - b) ^ 2 <= (0.01 * b) ^ 2) }'; }
best=$(col 8 | sed -n 's/.*(-j \([0-9]*\)).*/\1/p')
near "$(col 11)" "$(jq '.bound.makespan_ratio' "$RAW/gpu-auto.json")"
ok $? "auto / bound ($(col 11)) is auto's makespan over its bound"
near "$(col 13)" "$(jq '.bound.makespan_ratio' "$RAW/gpu-j$best.json")"
ok $? "best fixed / bound ($(col 13)) is -j $best's makespan over its bound"
near "$(col 10 | cut -d' ' -f1)" "$(jq '.bound.s' "$RAW/gpu-auto.json")"
ok $? "auto's bound is its summary's"
like "$(cat "$R")" "\| -j \| makespan \(s\) \| J/task \| failed \| bound \(s\) \| makespan / bound \|" \
	"each count measured: its bound and distance"
like "$(grep "^| $best |" "$R")" "^\| $best \| [0-9.]+ \| [^|]+ \| 0 \| [0-9.]+ \([a-z ]+\) \| [0-9.]+ \|$" \
	"-j $best's row has its bound and distance"
like "$(cat "$R")" "bound [0-9.]+ s \((cpu|gpu|longest task)\): CPU [0-9.]+ s, GPU [0-9.-]+ s, longest task [0-9.]+ s; makespan / bound [0-9.]+" \
	"auto's detail says its bound and what it is made of"
