#!/bin/bash
# mutate.t: tests/mutate.sh's baseline, on a tree of its own (one C file, two unit tests; a few
# seconds): every unit test runs unmutated as a mutant's run starts it (GPUPACK_SRC set, from the
# worker's directory), links as make links it (the Makefile's -Wl,--wrap flags), and maps to what it
# links; one that fails unmutated stops the run in one line naming it, with no report (it used to
# leave every unit test after it unmapped and score mutants against the shell tests alone).
# shellcheck source=tests/lib.sh disable=SC2154 # rc, out, err: set by run() in lib.sh
. "$(dirname "$0")/../lib.sh"

for tool in cc make ar git flock timeout; do
	command -v "$tool" >/dev/null 2>&1 || { skip "no $tool here" 8; exit 0; }
done

tree=$T/tree
mkdir -p "$tree/src" "$tree/tests/unit" "$tree/tests/tools"
cp "$GPUPACK_SRC/tests/mutate.sh" "$GPUPACK_SRC/tests/run-test" "$tree/tests/"
: >"$tree/tests/mutate-equivalent.txt"
cat >"$tree/src/x.c" <<'EOF'
int add(int a, int b);

int
add(int a, int b)
{
	if (a < 0)
		return 0;
	return a + b;
}
EOF
# (no candidate in main.c: only x.c's mutants are in the sample)
printf 'int main(void)\n{\n\treturn (int)sizeof(char) - (int)sizeof(char);\n}\n' >"$tree/src/main.c"
printf 'int main(void)\n{\n\treturn 0;\n}\n' >"$tree/tests/tools/tool.c"
# test_a: as test_farm_life, it needs GPUPACK_SRC (the tree it runs from)
cat >"$tree/tests/unit/test_a.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int add(int a, int b);
int
main(void)
{
	const char *src = getenv("GPUPACK_SRC");
	char p[4096];

	if (!src || add(1, 1) != 2)
		return 1;
	snprintf(p, sizeof p, "%s/src/x.c", src);
	return access(p, F_OK) != 0;
}
EOF
# test_b: after test_a, the one that kills; its link wraps getpid (as test_farm_life's wraps wait4);
# it fails when the tree holds a file named fail-b
cat >"$tree/tests/unit/test_b.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>
int add(int a, int b);
pid_t __real_getpid(void);
pid_t __wrap_getpid(void);
pid_t
__wrap_getpid(void)
{
	return 4242;
}
int
main(void)
{
	const char *src = getenv("GPUPACK_SRC");
	char p[4096];

	snprintf(p, sizeof p, "%s/fail-b", src ? src : ".");
	return !(getpid() == 4242 && add(-1, 5) == 0 && add(0, 5) == 5 && add(2, 3) == 5) || access(p, F_OK) == 0;
}
EOF
cat >"$tree/Makefile" <<'EOF'
build/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	cc -c -o $@ $<
build/gpupack: build/src/main.o build/src/x.o
	cc -o $@ $^
build/tests/unit/test_b: tests/unit/test_b.c build/src/x.o
	@mkdir -p $(dir $@)
	cc -Wl,--wrap=getpid -o $@ $^
build/tests/unit/%: tests/unit/%.c build/src/x.o
	@mkdir -p $(dir $@)
	cc -o $@ $^
build/tests/%:
	@mkdir -p $(dir $@)
	touch $@
EOF
printf 'build/\nreport.*\n' >"$tree/.gitignore"
(cd "$tree" && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -q -m tree) ||
	{ skip "git cannot make a repository here" 8; exit 0; }

# as from a user's shell: nothing of make check's environment (the harness sets what a test needs)
# the baseline passes: every mutant of add() is killed by a unit test, test_b's among them
run env -u GPUPACK_SRC -u GPUPACK -u GPUPACK_BUILD sh "$tree/tests/mutate.sh" -S -j 1 -d src -n 100 -o "$tree/report.md"
ok "$rc" "a tree whose unit tests pass: the run ends 0"
printf '%s\n' "$err" | grep -q 'fails on the unmutated tree\|cannot tell what'
ok $((! $?)) "no unit test fails unmutated or goes unmapped (GPUPACK_SRC set, test_b's wrap taken)"
tsv=$tree/report.tsv
n=$(grep -c . "$tsv" 2>/dev/null)
k=$(grep -c '^killed build/tests/unit/test_' "$tsv" 2>/dev/null)
[ "${n:-0}" -gt 0 ] && [ "$k" = "$n" ]
ok $? "every mutant of src/x.c killed by a unit test (${k:-0} of ${n:-0})"
grep -q '^killed build/tests/unit/test_b' "$tsv" 2>/dev/null
ok $? "test_b, after test_a, runs for the mutants"

# -R: the report of earlier results, a later file's line of a mutant replacing an earlier one's
head -n 1 "$tsv" | awk -F'\t' -v OFS='\t' '{ $1 = "survived"; print }' >"$tree/later.tsv"
run env -u GPUPACK_SRC -u GPUPACK -u GPUPACK_BUILD sh "$tree/tests/mutate.sh" -d src -R "$tsv $tree/later.tsv" \
	-o "$tree/merged.md"
ok "$rc" "-R: the report of earlier runs' results, nothing built (exit $rc)"
like "$(grep '^| \*\*all' "$tree/merged.md" 2>/dev/null)" "^\| \*\*all\*\* \| ${n:-x} \| $((${n:-1} - 1)) \| 0 \| 1 \|" \
	"the later line counts: one mutant survived, the rest killed"

# test_b fails unmutated (test_a before it passes): the run stops, one line naming it, no report
rm -f "$tree/report.md" "$tsv"
: >"$tree/fail-b"
run env -u GPUPACK_SRC -u GPUPACK -u GPUPACK_BUILD sh "$tree/tests/mutate.sh" -S -j 1 -d src -n 100 -o "$tree/report.md"
ok $((rc == 0)) "a unit test that fails unmutated: the run fails (exit $rc)"
is "$(printf '%s\n' "$err" | grep -c 'fails on the unmutated tree')" 1 "one line says so"
like "$err" 'mutate: build/tests/unit/test_b fails on the unmutated tree: no mutant can be scored' "it names test_b"
test ! -e "$tree/report.md" && test ! -e "$tsv"
ok $? "and no report is written"
