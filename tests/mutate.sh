#!/bin/sh
# mutate.sh: mutation testing of gpupack's C sources (`make mutate`).
#
# A mutant is the source with one small change a slip of the keyboard could
# make: a comparison flipped (== and !=, < and >=, > and <=), a condition
# negated (if (x) -> if (!(x))), a call dropped (f(a); -> ;), or a constant
# off by one (N -> N+1). Each is compiled and run against the tests that
# exercise its file: first every unit test whose binary links the file's
# code (found once, by linking each unit test against an archive of the
# objects and reading which members the linker took), cheapest first, then
# the shell tests the table below names for the file, cheapest and likeliest
# killers first, each stopping at its first failure, all under a time limit.
# A test that fails kills it; one that survives every test shows code the
# tests do not pin down. A mutant that does not compile (-Werror) is
# stillborn and not counted.
#
# The sanitizer pass: a survivor is built again with
# -fsanitize=address,undefined (LeakSanitizer on) and
# -ftrivial-auto-var-init=pattern (an uninitialised local holds garbage, not
# whatever the stack had), and run against the same unit tests; a dropped
# call (a free, close or fclose left out, an initialisation skipped) also
# against the first SANTESTS (3) shell tests of its table, with that gpupack,
# as make check's second half runs them: a leak, a use after free or a read
# of what was never set kills it (a time-out there does not). One sanitizer
# tree, built on first need and shared under a lock: only survivors pay for
# it. -S skips the pass.
#
# The sample is reproducible and stable: every candidate gets a hash of its
# file, the text of its line (and which of identical lines it is), its column,
# its kind and the seed; the COUNT smallest are the sample. A change to one
# file changes only that file's candidates, so a survivor of one run is
# still in the sample of the next unless its own line changed.
#
# Speed: each worker (JOBS) keeps a built scratch copy of the tree (the
# working tree is never touched). A mutant rebuilds only its own object;
# afterwards the original source and object are put back with their times,
# so the next mutant compiles one file, not two, and only the binaries that
# link it are relinked.
#
#   tests/mutate.sh [-n COUNT] [-s SEED] [-j JOBS] [-o REPORT] [-d DIRS] [-m FILE] [-l] [-S] [-R "TSV..."]
#     -n  mutants to sample (200)        -s  seed (13)
#     -j  parallel workers (2)           -o  the report (bench/results/mutation.md)
#     -d  folders to mutate ("src/farm src/share src/gpu src/util")
#     -m  run the mutants FILE lists (lines as -l prints them: to try survivors again)
#     -l  list the candidates and the sample, build nothing
#     -S  no sanitizer pass for surviving dropped calls
#     -R  build and run nothing: the report of earlier runs' raw results (their REPORT.tsv files,
#         one or more, in order: a mutant in a later file replaces its line of an earlier one,
#         as a rerun of the survivors after new tests does)
#   MUTATE_TEST_TIMEOUT (120 s per test), SANTESTS (3 shell tests in the sanitizer pass)
#
# tests/mutate-equivalent.txt lists survivors that are equivalent to the
# original (no test can kill them), each with why; the report counts them
# apart. Needs: a C compiler, make, ar, awk, flock, timeout (coreutils), git.
set -u

COUNT=200
SEED=13
JOBS=2
DIRS="src/farm src/share src/gpu src/util"
REPORT=bench/results/mutation.md
LIST=0
SAN=1
SANTESTS=${SANTESTS:-3}
MUTANTS=
FROM=
while getopts n:s:j:o:d:m:lSR: opt; do
	case $opt in
	n) COUNT=$OPTARG ;;
	s) SEED=$OPTARG ;;
	j) JOBS=$OPTARG ;;
	o) REPORT=$OPTARG ;;
	d) DIRS=$OPTARG ;;
	l) LIST=1 ;;
	S) SAN=0 ;;
	m) MUTANTS=$OPTARG ;;
	R) FROM=$OPTARG ;;
	*) echo "usage: tests/mutate.sh [-n COUNT] [-s SEED] [-j JOBS] [-o REPORT] [-d DIRS] [-m FILE] [-l] [-S] [-R \"TSV...\"]" >&2; exit 2 ;;
	esac
done
SRC=$(cd "$(dirname "$0")/.." && pwd)
cd "$SRC" || exit 2
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/gpupack-mutate.XXXXXX")
# (a signal ends the run: without the exit, sh would go on to write a report of nothing)
trap 'rm -rf "$SCRATCH"' EXIT
trap 'rm -rf "$SCRATCH"; exit 130' INT TERM

# ---- candidates ----------------------------------------------------------------------------------
# One line per candidate: FILE LINE COL OP ORIG REPL HASH (tab-separated), in file and line
# order. HASH (below 2^31) is of the file, the line's text and which of identical lines it is,
# the column, the kind and the seed: not of the line number, so that it survives edits elsewhere.
# Strings, character constants, comments and preprocessor lines are never mutated.
candidates() {
	for f in $(find $DIRS -name '*.c' | LC_ALL=C sort); do
		LC_ALL=C awk -v file="$f" -v seed="$SEED" '
		BEGIN { for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i }
		function hash(s,    h, i, n) {
			h = seed % 2147483646 + 1; n = length(s)
			for (i = 1; i <= n; i++) h = (h * 131 + ord[substr(s, i, 1)] + 1) % 2147483647
			for (i = 0; i < 3; i++) h = (h * 16807) % 2147483647
			return h
		}
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
			printf "%s\t%d\t%d\t%s\t%s\t%s\t%d\n", file, NR, col, op, orig, repl,
			    hash(file "\t" $0 "\t" occ "\t" col "\t" op "\t" repl)
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
			occ = ++seen[$0]
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

# The sample: the COUNT candidates of smallest hash (ties: file and line order).
sample() {
	LC_ALL=C sort -t"$(printf '\t')" -k7,7n -k1,1 -k2,2n -k3,3n | head -n "$COUNT" | cut -f1-6
}

candidates >"$SCRATCH/candidates"
if [ -n "$MUTANTS" ]; then grep -v '^#' "$MUTANTS" | cut -f1-6; else sample <"$SCRATCH/candidates"; fi | LC_ALL=C sort -t"$(printf '\t')" -k1,1 -k2,2n -k3,3n >"$SCRATCH/sample"
if [ "$LIST" -eq 1 ]; then
	echo "# $(wc -l <"$SCRATCH/candidates") candidates in $DIRS; sample of $COUNT, seed $SEED"
	cat "$SCRATCH/sample"
	exit 0
fi

# ---- which shell tests exercise a file --------------------------------------------------------
# The unit tests come from what each links (units_for, below). Shell tests, cheapest and likeliest
# killers first (seconds on an idle 2-core machine in brackets where they are more than a few).
tests_for() {
	c=tests/cli
	case $1 in
	src/util/proc.c) t="$c/mps-hostile.t $c/run-guard.t" ;;
	src/util/fs.c) t="$c/hostile.t $c/mps-dir.t $c/mps-hostile.t $c/run-journal.t $c/run-torn.t $c/mps.t $c/run.t" ;;
	src/util/units.c|src/util/str.c|src/util/json.c|src/util/table.c) t="$c/usage.t $c/devices.t $c/run-forms.t $c/run-parallel.t $c/run.t" ;;
	src/util/*) t="$c/usage.t $c/devices.t $c/run-forms.t $c/run.t" ;;
	src/farm/journal.c) t="$c/hostile.t $c/run-journal.t $c/run-torn.t $c/run.t" ;;
	src/farm/guard.c) t="$c/mps-hostile.t $c/run-guard.t" ;;
	src/farm/health.c|src/farm/mpsfarm.c) t="$c/mps-hostile.t $c/run-mps.t $c/run-mps-faults.t" ;;
	src/farm/slot.c) t="$c/run-forms.t $c/run-place.t $c/run.t" ;;
	src/farm/cmdline.c|src/farm/shell.c) t="$c/run-forms.t $c/run-parallel.t $c/run.t" ;;
	src/farm/task.c|src/farm/input.c) t="$c/hostile.t $c/run-forms.t $c/run-parallel.t $c/run.t" ;;
	src/farm/output.c|src/farm/deliver.c) t="$c/run-journal.t $c/run-parallel.t $c/run.t" ;;
	src/farm/opts.c) t="$c/usage.t $c/run-forms.t $c/hostile.t $c/run-shard.t $c/run-parallel.t $c/run.t" ;;
	src/farm/progress.c) t="$c/run-forms.t $c/run.t $c/run-mps-faults.t $c/run-auto.t" ;;
	# -j auto (run-auto.t: ~25 s; the curves are test_farm_control's, which links control.c)
	src/farm/auto.c|src/farm/control.c|src/farm/remember.c|src/farm/oom.c) t="$c/run-forms.t $c/run.t $c/run-auto.t" ;;
	# a farm over nodes; run-nodes-lost.t (~15 s) the gpupacks declared lost, who wait for the farm's end
	src/farm/nodes*.c) t="$c/run-nodes.t $c/run-nodes-lost.t" ;;
	# the end of a task (test_farm_life and test_farm_verdict link them: the generated sequences);
	# run-stop-disk.t (~5 s) the output lost (END_OUTPUT_LOST, --results FILE and DIR on a full disk),
	# run-auto.t (~25 s) what -j auto learns from each end (auto_ended)
	src/farm/verdict.c|src/farm/finish.c|src/farm/halt.c) t="$c/run-stop.t $c/run-stop-disk.t $c/run-signals.t $c/run-torn.t $c/run-fault-own.t $c/run-journal.t $c/run.t $c/run-auto.t" ;;
	src/farm/*) t="$c/hostile.t $c/usage.t $c/run-journal.t $c/run-forms.t $c/run-torn.t $c/run-shard.t $c/run-place.t $c/run-signals.t $c/run-parallel.t $c/run.t $c/run-mps.t $c/run-guard.t $c/run-nodes.t" ;;
	src/share/mps*.c) t="$c/mps-dir.t $c/mps-exec.t $c/mps-hostile.t $c/devices.t $c/jobmps.t $c/mps.t $c/run-mps-faults.t" ;;
	# the MIG planner: mig-check.t (~60 s) compares plans with an independent checker's
	src/share/mig*.c) t="$c/mig-apply.t $c/mig.t $c/mig-check.t" ;;
	src/share/*) t="$c/timeslice.t $c/devices.t $c/run-place.t" ;;
	src/gpu/topology*.c|src/gpu/sim.c) t="$c/hostile.t $c/devices.t $c/timeslice.t $c/run-place.t $c/mig.t" ;;
	src/gpu/nvml*.c) t="$c/nvml.t $c/devices.t" ;;
	src/gpu/*) t="$c/devices.t $c/run-place.t $c/run.t" ;;
	*) t="$c/usage.t $c/devices.t $c/run.t" ;;
	esac
	# only tests this tree has (a name in the table that is gone would count as a kill)
	for x in $t; do
		[ -f "$x" ] && echo "$x"
	done
}

# The unit tests that link FILE's code, cheapest first ($SCRATCH/reach: "MS TEST OBJECT" lines).
units_for() {
	awk -v o="build/${1%.c}.o" '$3 == o { print $2 }' "$SCRATCH/reach"
}

# ---- the workers --------------------------------------------------------------------------------
UNITS=$(ls tests/unit/test_*.c | sed 's|^|build/|;s|\.c$||')
# A scratch copy of the tree (as committed, plus the working tree's changes).
copy_tree() {
	mkdir -p "$1"
	git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - 2>/dev/null |
	    tar -xf - -C "$1"
}
# ... built once per worker.
prepare() {
	w=$SCRATCH/w$1
	copy_tree "$w"
	(cd "$w" && make -s -j1 build/gpupack $UNITS \
		$(ls tests/tools/*.c | sed 's|^|build/|;s|\.c$||') \
		build/tests/fakenvml/libnvidia-ml.so.1 build/tests/fakenvml/old/libnvidia-ml.so.1 \
		build/tests/fakenvml/broken/libnvidia-ml.so.1 build/tests/preload/full-disk.so >/dev/null 2>&1)
}

# Which objects each unit test links: the linker, given an archive of all objects instead of the
# objects themselves, takes only the members the test needs (and what those need); --trace names
# them. The link takes the test's own -Wl,--wrap flags from the Makefile (test_farm_life wraps the
# clock and the processes): a link that fails maps nothing, so it stops the run. Each unit test also
# runs once here, unmutated, for its time, exactly as a mutant's run starts it (run_one): the
# baseline. One that fails there stops the run, naming it: a baseline that fails scores nothing.
# (tests/cli/mutate.t runs the harness on a tree of its own to keep it so.)
reach() {
	w=$SCRATCH/w1
	: >"$SCRATCH/reach.raw"
	rm -f "$w/build/mutate-reach.a"
	(cd "$w" && ar rcsT build/mutate-reach.a $(find build/src -name '*.o' ! -path build/src/main.o ! -name 'spank*')) || {
		echo "mutate: cannot make the archive of the scratch build's objects" >&2
		return 1
	}
	for u in $UNITS; do
		t0=$(date +%s%N)
		run_one "$w" "$u"
		case $? in
		0) ;;
		124) echo "mutate: $u times out (${MUTATE_TEST_TIMEOUT:-120} s) on the unmutated tree: no mutant can be scored" >&2; return 1 ;;
		*) echo "mutate: $u fails on the unmutated tree: no mutant can be scored (run it: sh tests/run-test -b build $u)" >&2; return 1 ;;
		esac
		ms=$((($(date +%s%N) - t0) / 1000000))
		wraps=$(cd "$w" && make -n -W "${u#build/}.c" "$u" 2>/dev/null | grep -o -- '-Wl,--wrap=[A-Za-z0-9_]*' | sort -u)
		# shellcheck disable=SC2086
		if ! (cd "$w" && ${CC:-cc} -std=c11 -D_GNU_SOURCE -DGPUPACK_VERSION='"0"' -DGPUPACK_DATADIR='"/nonexistent"' 		    -Isrc -Itests/unit -O0 -w -o /dev/null "${u#build/}.c" build/mutate-reach.a -ldl -lpthread -lm 		    $wraps -Wl,--trace >"$SCRATCH/trace" 2>"$SCRATCH/trace.err"); then
			echo "mutate: cannot tell what $u links: its link against the archive fails: $(grep -m1 . "$SCRATCH/trace.err")" >&2
			return 1
		fi
		grep '^build/src/.*\.o$' "$SCRATCH/trace" | while read -r o; do printf '%d\t%s\t%s\n' "$ms" "$u" "$o"; done >>"$SCRATCH/reach.raw"
		grep -q "	$u	" "$SCRATCH/reach.raw" ||
		    echo "mutate: note: $u links no object of src/: it runs for no mutant" >&2
	done
	sort -n -k1,1 "$SCRATCH/reach.raw" >"$SCRATCH/reach"
}

# Run one test in worker dir $1 (gpupack $3 and the tools' build dir $4, default its own): 0 passed,
# 1 failed, 124 timed out. Shell tests stop at their first failure.
run_one() {
	(cd "$1" && GPUPACK="${3:-$1/build/gpupack}" GPUPACK_BUILD="${4:-$1/build}" GPUPACK_SRC="$1" TAP_BAIL=1 \
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

# ---- the sanitizer pass --------------------------------------------------------------------------
SANF="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# The shared sanitizer tree, built by the first worker that needs it (under the lock), with its
# unit tests run once unmutated: a tree where they fail (LeakSanitizer cannot run here, say) turns
# the pass off rather than killing every mutant.
san_prepare() {
	s=$SCRATCH/san
	[ -e "$s/.ready" ] && return 0
	[ -e "$s/.broken" ] && return 1
	t0=$(date +%s)
	copy_tree "$s"
	f="$SANF"
	echo 'int main(void) { return 0; }' >"$SCRATCH/probe.c"
	${CC:-cc} -ftrivial-auto-var-init=pattern -o "$SCRATCH/probe" "$SCRATCH/probe.c" 2>/dev/null &&
	    f="$f -ftrivial-auto-var-init=pattern"
	echo "$f" >"$s/.flags"
	if (cd "$s" && make -s -j1 CFLAGS="-O1 -g $f" LDFLAGS="$f" build/gpupack $UNITS >/dev/null 2>&1); then
		for u in $UNITS; do
			if ! run_one "$s" "$u" "$s/build/gpupack" "$SCRATCH/w1/build"; then
				echo "mutate: $u fails in the sanitizer build, unmutated: no sanitizer pass" >&2
				touch "$s/.broken"
				return 1
			fi
		done
		touch "$s/.ready"
		echo "mutate: the sanitizer tree built in $(($(date +%s) - t0)) s" >&2
		return 0
	fi
	echo "mutate: the sanitizer build fails: no sanitizer pass" >&2
	touch "$s/.broken"
	return 1
}

# san_pass W FILE UNITS SHELLS: the mutant of worker W's FILE in the sanitizer tree; prints the
# test that killed it, nothing when it survives.
san_pass() {
	(
		flock 9
		san_prepare || exit 0
		s=$SCRATCH/san
		obj=build/${2%.c}.o
		cp -p "$s/$2" "$s/$2.orig"
		cp -p "$s/$obj" "$s/$obj.orig"
		cp "$1/$2" "$s/$2"
		touch "$s/$2"
		f=$(cat "$s/.flags")
		if (cd "$s" && make -s CFLAGS="-O1 -g $f" LDFLAGS="$f" build/gpupack $3 >/dev/null 2>&1); then
			n=0
			for t in $3 $4; do
				case $t in build/*) ;; *) n=$((n + 1)); [ $n -gt "$SANTESTS" ] && break ;; esac
				case $t in
				build/*) run_one "$s" "$t" "$s/build/gpupack" "$1/build" ;;
				# the shell tests' tools and fake NVML from the worker's normal build
				*) run_one "$1" "$t" "$s/build/gpupack" ;;
				esac
				# a failure kills; a time-out under the sanitizers' slowness proves nothing
				[ $? -eq 1 ] && { echo "$t"; break; }
			done
		fi
		mv -f "$s/$2.orig" "$s/$2"
		mv -f "$s/$obj.orig" "$s/$obj"
		(cd "$s" && rm -f build/gpupack $3)
	) 9>"$SCRATCH/san.lock"
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
		op=$(printf '%s' "$m" | cut -f4)
		obj=build/${file%.c}.o
		units=$(units_for "$file")
		# the originals, with their times, from the scratch copy (the working tree may change meanwhile)
		cp -p "$w/$file" "$w/$file.orig"
		cp -p "$w/$obj" "$w/$obj.orig"
		t0=$(date +%s)
		if ! apply "$w" "$m"; then
			res=stale
		elif ! (cd "$w" && make -s build/gpupack $units </dev/null >/dev/null 2>&1); then
			res=stillborn
		else
			res=survived
			for t in $units $(tests_for "$file"); do
				run_one "$w" "$t"
				case $? in
				1) res="killed $t"; break ;;
				124) res="timeout $t"; break ;;
				esac
			done
			# the sanitizer pass: the unit tests for every survivor, the shell tests too for a
			# dropped call (where a leak or a skipped initialisation hides)
			if [ "$res" = survived ] && [ "$SAN" -eq 1 ]; then
				shells=
				[ "$op" = call ] && shells=$(tests_for "$file")
				k=$(san_pass "$w" "$file" "$units" "$shells" </dev/null)
				[ -n "$k" ] && res="killed sanitizer:$k"
			fi
		fi
		# put back the original and its object, times and all: make sees them as they were
		mv -f "$w/$file.orig" "$w/$file"
		mv -f "$w/$obj.orig" "$w/$obj"
		(cd "$w" && rm -f build/gpupack $units)
		printf '%s\t%s\t%ss\n' "$res" "$m" "$(($(date +%s) - t0))"
	done <"$SCRATCH/sample"
}

start=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
if [ -n "$FROM" ]; then
	# earlier runs' results: the last line of each mutant; the time is the mutants' own
	for t in $FROM; do
		[ -r "$t" ] || { echo "mutate: -R: cannot read $t" >&2; exit 2; }
	done
	# shellcheck disable=SC2086
	awk -F'\t' '{ k = $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7; if (!(k in line)) order[++n] = k; line[k] = $0 }
	    END { for (i = 1; i <= n; i++) print line[order[i]] }' $FROM |
	    LC_ALL=C sort -t"$(printf '\t')" -k2,2 -k3,3n -k4,4n >"$SCRATCH/results"
	start=0
	end=$(awk -F'\t' '{ s += $NF } END { print s + 0 }' "$SCRATCH/results")
else
echo "mutate: $(wc -l <"$SCRATCH/candidates") candidates in $DIRS; $(wc -l <"$SCRATCH/sample") sampled (seed $SEED); $JOBS workers" >&2
for j in $(seq "$JOBS"); do prepare "$j" & done
wait
for j in $(seq "$JOBS"); do
	if [ ! -x "$SCRATCH/w$j/build/gpupack" ]; then
		echo "mutate: the tree does not build" >&2
		exit 1
	fi
done
# the baseline: every unit test passes unmutated and maps to what it links, or the run stops
reach || exit 1
echo "mutate: built and unit tests timed in $(($(date +%s) - start)) s" >&2
# the shell tests are not run unmutated first (minutes): make check says they pass
for j in $(seq "$JOBS"); do worker "$j" >"$SCRATCH/results.$j" & done
wait
end=$(date +%s)
cat "$SCRATCH"/results.* | LC_ALL=C sort -t"$(printf '\t')" -k2,2 -k3,3n -k4,4n >"$SCRATCH/results"
fi

# ---- the report ---------------------------------------------------------------------------------
EQUIV=tests/mutate-equivalent.txt
mkdir -p "$(dirname "$REPORT")"
awk -F'\t' -v seed="$SEED" -v count="$COUNT" -v secs="$((end - start))" -v jobs="$JOBS" \
    -v dirs="$DIRS" -v commit="$(git rev-parse --short HEAD)$(git diff --quiet || echo +changes)" \
    -v cands="$(wc -l <"$SCRATCH/candidates")" -v host="$(uname -n), $(nproc) cores, load average $load0 at the start and $(cut -d' ' -f1-3 /proc/loadavg) at the end" \
    -v equiv="$EQUIV" -v from="$FROM" '
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
	if ($1 ~ /sanitizer:/) sank++
	if (res == "equivalent") { eq[file]++; eqd[dir]++; eqall++ }
	if (res == "survived" || res == "equivalent")
		surv[++ns] = sprintf("| %s:%d | %s | `%s` -> `%s` | %s |", file, $3, $5, $6, $7,
		    res == "equivalent" ? "equivalent: " why[key] : "**survived**: no test fails")
	files[file] = 1; dirsv[dir] = 1
}
END {
	printf "# Mutation testing: %d mutants of %s\n\n", tot, dirs
	if (from != "")
		printf "tests/mutate.sh -R: the results of earlier runs (%s), %d s (%.1f min) of mutants; commit %s. ", from, secs, secs / 60, commit
	else {
		printf "`make mutate` (tests/mutate.sh): %d candidates, a sample of %d (seed %d), %d workers, %d s ", cands, count, seed, jobs, secs
		printf "(%.1f min) on %s; commit %s. ", secs / 60, host, commit
	}
	printf "%d stillborn (did not compile) or stale, not counted.\n\n", stillall
	printf "Killed: a test failed or timed out (%d of them only in the sanitizer pass: LeakSanitizer, ASan, UBSan, pattern-initialised locals). ", sank
	printf "Equivalent: the mutant behaves as the original (listed in tests/mutate-equivalent.txt with why). Score = killed / (mutants - equivalent).\n\n"
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
