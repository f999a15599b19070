#!/bin/sh
# results-index.t: every file and folder in bench/results/ is listed in its
# README.md (a measurement nobody can find is lost). "NAME.md (+ .tsv)" and
# "NAME.md, .txt" list both files.
. "${GPUPACK_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/lib.sh"
dir="$GPUPACK_SRC/bench/results"
readme="$dir/README.md"
[ -f "$readme" ]
ok $? "bench/results/README.md exists"
missing=""
n=0
for path in "$dir"/*; do
	f=$(basename "$path")
	[ "$f" = README.md ] && continue
	n=$((n + 1))
	grep -qF -- "$f" "$readme" && continue
	# NAME.ext listed beside its sibling: "NAME.md (+ .ext)" or "NAME.md, .ext"
	stem=${f%.*} ext=${f##*.}
	grep -F -- "$stem." "$readme" | grep -qE -- "(\(\+ |, )\.$ext\b" && continue
	missing="$missing $f"
done
ok $((n < 50)) "bench/results has entries ($n)"
is "$missing" "" "every entry of bench/results is listed in its README.md"
