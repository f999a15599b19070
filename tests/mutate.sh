#!/bin/sh
# mutate.sh: mutation testing of gpupack's C sources (`make mutate`).
#
# A mutant is the source with one small change a slip of the keyboard could
# make: a comparison flipped (== and !=, < and >=, > and <=), a condition
# negated (if (x) -> if (!(x))), a call dropped (f(a); -> ;), or a constant
# off by one (N -> N+1). Each is compiled and run against the tests that
# exercise its file (fast unit tests first, each shell test stopping at its
# first failure, all under a time limit): a test that fails kills it; one
# that survives every test shows code the tests do not pin down. A mutant
# that does not compile (-Werror) is stillborn and not counted.
#
# The sample is reproducible: every candidate of the chosen folders is
# listed in a fixed order, and a seeded generator (Park-Miller, exact in any
# awk) picks COUNT of them. Two workers (JOBS) build in scratch copies of
# the tree; the working tree is never touched.
#
#   tests/mutate.sh [-n COUNT] [-s SEED] [-j JOBS] [-o REPORT] [-d DIRS] [-l]
#     -n  mutants to sample (200)        -s  seed (13)
#     -j  parallel workers (2)           -o  the report (bench/results/mutation.md)
#     -d  folders to mutate ("src/farm src/share src/gpu src/util")
#     -l  list the candidates and the sample, build nothing
#
# tests/mutate-equivalent.txt lists survivors that are equivalent to the
# original (no test can kill them), each with why; the report counts them
# apart. Needs: a C compiler, make, awk, timeout (coreutils), git.
set -u

COUNT=200
SEED=13
JOBS=2
DIRS="src/farm src/share src/gpu src/util"
REPORT=bench/results/mutation.md
LIST=0
while getopts n:s:j:o:d:l opt; do
	case $opt in
	n) COUNT=$OPTARG ;;
	s) SEED=$OPTARG ;;
	j) JOBS=$OPTARG ;;
	o) REPORT=$OPTARG ;;
	d) DIRS=$OPTARG ;;
	l) LIST=1 ;;
	*) echo "usage: tests/mutate.sh [-n COUNT] [-s SEED] [-j JOBS] [-o REPORT] [-d DIRS] [-l]" >&2; exit 2 ;;
	esac
done
SRC=$(cd "$(dirname "$0")/.." && pwd)
cd "$SRC" || exit 2
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/gpupack-mutate.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT INT TERM

# ---- candidates ----------------------------------------------------------------------------------
# One line per candidate: FILE LINE COL OP ORIG REPL (tab-separated), in file and line order.
# Strings, character constants, comments and preprocessor lines are never mutated.
candidates() {
	for f in $(find $DIRS -name '*.c' | LC_ALL=C sort); do
		awk -v file="$f" '
		function blank(s,    out, i, c, n, q) {
			out = ""; n = length(s)
			for (i = 1; i <= n; i++) {
				c = substr(s, i, 1)
				if (incomment) {
					if (c == "*" && substr(s, i + 1, 1) == "/") { incomment = 0; out = out "  "; i++ }
					else out = out " "
					continue
				}
				if (c == "/" && substr(s, i + 1, 1) == "*") { incomment = 1; out = out "  "; i++; continue }
				if (c == "/" && substr(s, i + 1, 1) == "/") { while (i <= n) { out = out " "; i++ } break }
				if (c == "\"" || c == "\047") {
					q = c; out = out " "
					for (i++; i <= n; i++) {
						c = substr(s, i, 1)
						if (c == "\\") { out = out "  "; i++; continue }
						out = out " "
						if (c == q) break
					}
					continue
				}
				out = out c
			}
			return out
		}
		function emit(col, op, orig, repl) {
			printf "%s\t%d\t%d\t%s\t%s\t%s\n", file, NR, col, op, orig, repl
		}
		# the matching ) of the ( at p in s (blanked), or 0
		function close_paren(s, p,    d, i, c) {
			d = 0
			for (i = p; i <= length(s); i++) {
				c = substr(s, i, 1)
				if (c == "(") d++
				else if (c == ")" && --d == 0) return i
			}
			return 0
		}
		{
			b = blank($0)
			if (b ~ /^[ \t]*#/) next
			n = length(b)
			for (i = 1; i <= n; i++) {
				c = substr(b, i, 1); c2 = substr(b, i, 2); prev = substr(b, i - 1, 1)
				if (c2 == "==") { emit(i, "cmp", "==", "!="); i++; continue }
				if (c2 == "!=") { emit(i, "cmp", "!=", "=="); i++; continue }
				if (c2 == "<=" && prev != "<") { emit(i, "cmp", "<=", ">"); i++; continue }
				if (c2 == ">=" && prev != ">") { emit(i, "cmp", ">=", "<"); i++; continue }
				if (c2 == "<<" || c2 == ">>" || c2 == "->") { i++; continue }
				if (c == "<" && prev != "<") { emit(i, "cmp", "<", ">="); continue }
				if (c == ">" && prev != ">" && prev != "-") { emit(i, "cmp", ">", "<="); continue }
			}
			# if (...) and while (...) on one line: negated
			s = b; off = 0
			while (match(s, /(^|[^A-Za-z0-9_])(if|while) \(/)) {
				p = off + RSTART + RLENGTH - 1
				q = close_paren(b, p)
				if (q > p)
					emit(p, "neg", substr($0, p, q - p + 1), "(!" substr($0, p, q - p + 1) ")")
				off += RSTART + RLENGTH - 1
				s = substr(b, off + 1)
			}
			# a statement that is one call: dropped
			if (b ~ /^[ \t]*[A-Za-z_][A-Za-z0-9_]*\(.*\);[ \t]*$/ &&
			    b !~ /^[ \t]*(return|if|while|for|switch|sizeof|do)[ \t(]/) {
				match(b, /[A-Za-z_]/)
				emit(RSTART, "call", substr($0, RSTART), ";")
			}
			# decimal constants: off by one
			s = b; off = 0
			while (match(s, /[0-9]+/)) {
				p = off + RSTART; l = RLENGTH
				before = substr(b, p - 1, 1); after = substr(b, p + l, 1)
				if (before !~ /[A-Za-z0-9_.]/ && after !~ /[A-Za-z0-9_.]/ && l <= 9)
					emit(p, "const", substr($0, p, l), substr($0, p, l) + 1)
				off = p + l - 1
				s = substr(b, off + 1)
			}
		}' "$f"
	done
}

# The sample: COUNT candidates picked by a Park-Miller generator seeded with SEED.
sample() {
	awk -F'\t' -v seed="$SEED" -v count="$COUNT" '
	{ line[NR] = $0 }
	END {
		x = (seed % 2147483646) + 1
		n = NR
		for (i = 1; i <= n; i++) idx[i] = i
		# a partial Fisher-Yates shuffle: the first count places
		for (i = 1; i <= count && i <= n; i++) {
			x = (x * 16807) % 2147483647
			j = i + int(x % (n - i + 1))
			t = idx[i]; idx[i] = idx[j]; idx[j] = t
			print line[idx[i]]
		}
	}'
}

candidates >"$SCRATCH/candidates"
sample <"$SCRATCH/candidates" | LC_ALL=C sort -t"$(printf '\t')" -k1,1 -k2,2n -k3,3n >"$SCRATCH/sample"
if [ "$LIST" -eq 1 ]; then
	echo "# $(wc -l <"$SCRATCH/candidates") candidates in $DIRS; sample of $COUNT, seed $SEED"
	cat "$SCRATCH/sample"
	exit 0
fi

# ---- which tests exercise a file ---------------------------------------------------------------
# Unit tests first (fast), then the shell tests, cheapest first.
tests_for() {
	u=build/tests/unit
	case $1 in
	src/util/proc.c) t="$u/test_util tests/cli/run-guard.t tests/cli/mps-hostile.t" ;;
	src/util/fs.c) t="$u/test_util $u/test_farm_journal $u/test_mps tests/cli/hostile.t tests/cli/mps-dir.t tests/cli/mps-hostile.t tests/cli/mps.t tests/cli/run.t" ;;
	src/util/units.c|src/util/str.c|src/util/json.c|src/util/table.c) t="$u/test_util $u/test_farm_input $u/test_farm_cmdline tests/cli/usage.t tests/cli/devices.t tests/cli/run.t" ;;
	src/util/*) t="$u/test_util tests/cli/usage.t tests/cli/devices.t tests/cli/run.t" ;;
	src/farm/journal.c) t="$u/test_farm_journal tests/cli/run-torn.t tests/cli/hostile.t tests/cli/run-journal.t tests/cli/run.t" ;;
	src/farm/guard.c) t="tests/cli/mps-hostile.t tests/cli/run-guard.t" ;;
	src/farm/health.c|src/farm/mpsfarm.c) t="tests/cli/mps-hostile.t tests/cli/run-mps-faults.t tests/cli/run-mps.t" ;;
	src/farm/slot.c) t="$u/test_farm_slot tests/cli/run-place.t tests/cli/run.t" ;;
	src/farm/cmdline.c|src/farm/shell.c) t="$u/test_farm_cmdline tests/cli/run-parallel.t tests/cli/run.t" ;;
	src/farm/task.c|src/farm/input.c) t="$u/test_farm_input tests/cli/hostile.t tests/cli/run-parallel.t tests/cli/run.t" ;;
	src/farm/output.c|src/farm/deliver.c) t="$u/test_farm_journal tests/cli/run-journal.t tests/cli/run-parallel.t tests/cli/run.t" ;;
	src/farm/opts.c) t="tests/cli/usage.t tests/cli/run-shard.t tests/cli/hostile.t tests/cli/run-parallel.t tests/cli/run.t" ;;
	src/farm/nodes*.c) t="tests/cli/run-nodes.t" ;;
	src/farm/*) t="$u/test_farm_slot $u/test_farm_input $u/test_farm_cmdline tests/cli/run-torn.t tests/cli/hostile.t tests/cli/usage.t tests/cli/run-shard.t tests/cli/run-journal.t tests/cli/run-place.t tests/cli/run-signals.t tests/cli/run-parallel.t tests/cli/run.t tests/cli/run-mps.t tests/cli/run-guard.t" ;;
	src/share/mps*.c) t="$u/test_mps tests/cli/mps-dir.t tests/cli/mps-hostile.t tests/cli/mps-exec.t tests/cli/devices.t tests/cli/jobmps.t tests/cli/mps.t tests/cli/run-mps-faults.t" ;;
	src/share/mig*.c) t="$u/test_mig_plan tests/cli/mig.t" ;;
	src/share/*) t="tests/cli/timeslice.t tests/cli/devices.t tests/cli/run-place.t" ;;
	src/gpu/topology*.c|src/gpu/sim.c) t="$u/test_topology $u/test_util tests/cli/hostile.t tests/cli/timeslice.t tests/cli/devices.t tests/cli/run-place.t tests/cli/mig.t" ;;
	src/gpu/nvml*.c) t="$u/test_nvml tests/cli/nvml.t tests/cli/devices.t" ;;
	src/gpu/*) t="$u/test_topology $u/test_util tests/cli/devices.t tests/cli/run-place.t tests/cli/run.t" ;;
	*) t="$u/test_util tests/cli/usage.t tests/cli/devices.t tests/cli/run.t" ;;
	esac
	# only tests this tree has (a name in the table that is gone would make every mutant stillborn)
	for x in $t; do
		case $x in
		build/*) [ -f "${x#build/}.c" ] && echo "$x" ;;
		*) [ -f "$x" ] && echo "$x" ;;
		esac
	done
}

# ---- the workers --------------------------------------------------------------------------------
# A scratch copy of the tree (as committed, plus the working tree's changes), built once.
prepare() {
	w=$SCRATCH/w$1
	mkdir -p "$w"
	git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - 2>/dev/null |
	    tar -xf - -C "$w"
	(cd "$w" && make -s -j1 build/gpupack \
		$(ls tests/unit/test_*.c | sed 's|^|build/|;s|\.c$||') \
		$(ls tests/tools/*.c | sed 's|^|build/|;s|\.c$||') \
		build/tests/fakenvml/libnvidia-ml.so.1 build/tests/fakenvml/old/libnvidia-ml.so.1 \
		build/tests/fakenvml/broken/libnvidia-ml.so.1 build/tests/preload/full-disk.so >/dev/null 2>&1)
}

# Run one test in worker dir w: 0 passed, 1 failed, 124 timed out. Shell tests stop at their first failure.
run_one() {
	(cd "$1" && GPUPACK="$1/build/gpupack" GPUPACK_BUILD="$1/build" GPUPACK_SRC="$1" TAP_BAIL=1 \
		timeout -s KILL "${MUTATE_TEST_TIMEOUT:-120}" sh tests/run-test "$2" </dev/null >/dev/null 2>&1)
	rc=$?
	[ $rc -eq 137 ] && return 124
	[ $rc -eq 0 ] && return 0
	return 1
}

# Apply candidate line $2 (FILE LINE COL OP ORIG REPL) in worker dir $1; 1 when it no longer applies.
apply() {
	printf '%s\n' "$2" | awk -F'\t' -v w="$1" '
	{
		file = $1; ln = $2; col = $3; orig = $5; repl = $6
		path = w "/" file; out = path ".mut"; n = 0; ok = 0
		while ((getline l < path) > 0) {
			n++
			if (n == ln && substr(l, col, length(orig)) == orig) {
				l = substr(l, 1, col - 1) repl substr(l, col + length(orig)); ok = 1
			}
			print l > out
		}
		close(path); close(out)
		exit ok ? 0 : 1
	}' && mv "$1/$(printf '%s' "$2" | cut -f1).mut" "$1/$(printf '%s' "$2" | cut -f1)"
}

# Worker $1 takes every JOBS-th mutant of the sample; one result line per mutant. Builds and
# tests read /dev/null: the sample is this loop's stdin, and `gpupack run` reads its input there.
worker() {
	w=$SCRATCH/w$1
	i=0
	while IFS= read -r m; do
		i=$((i + 1))
		[ $(((i - 1) % JOBS)) -eq $(($1 - 1)) ] || continue
		file=$(printf '%s' "$m" | cut -f1)
		# the original from the scratch copy: the working tree may change meanwhile
		cp "$w/$file" "$w/$file.orig"
		if ! apply "$w" "$m"; then
			printf 'stale\t%s\n' "$m"
			continue
		fi
		t0=$(date +%s)
		if ! (cd "$w" && make -s build/gpupack $(for t in $(tests_for "$file"); do case $t in build/*) echo "$t" ;; esac; done) >/dev/null 2>&1); then
			res=stillborn
		else
			res=survived
			for t in $(tests_for "$file"); do
				run_one "$w" "$t"
				case $? in
				1) res="killed $t"; break ;;
				124) res="timeout $t"; break ;;
				esac
			done
		fi
		mv "$w/$file.orig" "$w/$file"
		touch "$w/$file"
		printf '%s\t%s\t%ss\n' "$res" "$m" "$(($(date +%s) - t0))"
	done <"$SCRATCH/sample"
}

start=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "mutate: $(wc -l <"$SCRATCH/candidates") candidates in $DIRS; $(wc -l <"$SCRATCH/sample") sampled (seed $SEED); $JOBS workers" >&2
for j in $(seq "$JOBS"); do prepare "$j" & done
wait
for j in $(seq "$JOBS"); do
	w=$SCRATCH/w$j
	# the tests must pass on the unmutated tree, or nothing below means anything
	if [ ! -x "$w/build/gpupack" ]; then
		echo "mutate: the tree does not build" >&2
		exit 1
	fi
done
for j in $(seq "$JOBS"); do worker "$j" >"$SCRATCH/results.$j" & done
wait
end=$(date +%s)
cat "$SCRATCH"/results.* | LC_ALL=C sort -t"$(printf '\t')" -k2,2 -k3,3n -k4,4n >"$SCRATCH/results"

# ---- the report ---------------------------------------------------------------------------------
EQUIV=tests/mutate-equivalent.txt
mkdir -p "$(dirname "$REPORT")"
awk -F'\t' -v seed="$SEED" -v count="$COUNT" -v secs="$((end - start))" -v jobs="$JOBS" \
    -v dirs="$DIRS" -v commit="$(git rev-parse --short HEAD)$(git diff --quiet || echo +changes)" \
    -v cands="$(wc -l <"$SCRATCH/candidates")" -v host="$(uname -n), $(nproc) cores, load average $load0 at the start and $(cut -d' ' -f1-3 /proc/loadavg) at the end" \
    -v equiv="$EQUIV" '
BEGIN {
	while ((getline l < equiv) > 0) {
		if (l ~ /^#/ || l !~ /\t/) continue
		split(l, e, "\t"); why[e[1] "\t" e[2] "\t" e[3] "\t" e[4]] = e[5]
	}
}
{
	split($1, r, " "); res = r[1]; file = $2; key = $2 "\t" $3 "\t" $4 "\t" $5
	dir = file; sub(/\/[^\/]*$/, "", dir)
	if (res == "stale" || res == "stillborn") { born[file] += 0; still[file]++; stillall++; next }
	if (res == "survived" && (key in why)) res = "equivalent"
	n[file]++; nd[dir]++; tot++
	if (res == "killed" || res == "timeout") { k[file]++; kd[dir]++; kill++ }
	if (res == "equivalent") { eq[file]++; eqd[dir]++; eqall++ }
	if (res == "survived" || res == "equivalent")
		surv[++ns] = sprintf("| %s:%d | %s | `%s` -> `%s` | %s |", file, $3, $5, $6, $7,
		    res == "equivalent" ? "equivalent: " why[key] : "**survived**: no test fails")
	files[file] = 1; dirsv[dir] = 1
}
END {
	printf "# Mutation testing: %d mutants of %s\n\n", tot, dirs
	printf "`make mutate` (tests/mutate.sh): %d candidates, a sample of %d (seed %d), %d workers, %d s ", cands, count, seed, jobs, secs
	printf "(%.1f min) on %s; commit %s. %d stillborn (did not compile) or stale, not counted.\n\n", secs / 60, host, commit, stillall
	printf "Killed: a test failed or timed out. Equivalent: the mutant behaves as the original (listed in tests/mutate-equivalent.txt with why). Score = killed / (mutants - equivalent).\n\n"
	printf "| folder | mutants | killed | equivalent | survived | score |\n|---|---|---|---|---|---|\n"
	for (d in dirsv) {
		m = nd[d] - eqd[d]
		printf "| %s | %d | %d | %d | %d | %.1f%% |\n", d, nd[d], kd[d], eqd[d], nd[d] - kd[d] - eqd[d], m ? 100 * kd[d] / m : 100
	}
	m = tot - eqall
	printf "| **all** | %d | %d | %d | %d | **%.1f%%** |\n\n", tot, kill, eqall, tot - kill - eqall, m ? 100 * kill / m : 100
	printf "## Per file\n\n| file | mutants | killed | equivalent | survived |\n|---|---|---|---|---|\n"
	for (f in files) printf "| %s | %d | %d | %d | %d |\n", f, n[f], k[f], eq[f], n[f] - k[f] - eq[f]
	printf "\n## Mutants not killed\n\n| where | kind | change | status |\n|---|---|---|---|\n"
	for (i = 1; i <= ns; i++) print surv[i]
}' "$SCRATCH/results" >"$REPORT.tmp"
# tables in a stable order (awk's for-in has none)
awk '/^\| src/ { rows[++n] = $0; next } { if (n) { flush() } print } function flush(  i) { cmd = "LC_ALL=C sort"; for (i = 1; i <= n; i++) print rows[i] | cmd; close(cmd); n = 0 } END { if (n) flush() }' \
	"$REPORT.tmp" >"$REPORT"
rm -f "$REPORT.tmp"
cp "$SCRATCH/results" "${REPORT%.md}.tsv"
echo "mutate: report in $REPORT (raw results in ${REPORT%.md}.tsv), $((end - start)) s" >&2
