#!/bin/bash
# shellcheck disable=SC1083,SC2016,SC2086,SC2034 # replacement strings, $VARS of the tasks and word splitting are on purpose
# parallel-diff.t: GNU parallel itself and gpupack run, side by side, on the
# commands people write for parallel. Each case runs both in fresh copies of
# a fixture directory and compares stdout, the exit status, every file the
# command left (joblogs by their Seq, Exitval, Signal and Command columns,
# --results trees whole). Output is compared line-sorted unless the case
# orders it (-k, -j1). gpupack runs on a simulated H100 with --share
# timeslice: 2 slots, as parallel's default -j on a 2-CPU machine.
#
#   t NAME ARGS...        the same arguments to both: must be identical
#   ts NAME SNIPPET       a shell snippet run with P as either program (P ARGS...)
#   tin NAME FILE ARGS... the same, with FILE (in the fixtures) as stdin
#   doc NAME CHECK        a documented difference: gpupack's own behaviour, checked
#   refused NAME ARGS...  gpupack refuses with one line naming the alternative
#
# At the end a line counts the cases: identical, documented-different, refused.
# GNU parallel's side is recorded (tests/cli/parallel-diff.golden, see run_all): a case
# whose gpupack side does what parallel did there passes without running parallel; any
# other runs both live, and so does every thirtieth case, to check the recording against the
# parallel installed here (a mismatch runs every case live). After adding or changing cases, record again:
#   PARALLEL_DIFF_RECORD=tests/cli/parallel-diff.golden tests/run-test -b build tests/cli/parallel-diff.t
# In make check's sanitizer pass (GPUPACK_TEST_PASS=san) GNU parallel's side is not run
# again: the first pass compared it; gpupack runs every case under the sanitizers, which
# must not report.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

if ! command -v parallel >/dev/null 2>&1 || ! parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
	echo "1..0 # SKIP GNU parallel is not installed (.ci/run installs it)"
	trap - EXIT
	rm -rf "$T"
	exit 0
fi
# a home of its own: no ~/.parallel/config of the user changes either side
export HOME="$T/home"
mkdir -p "$HOME/.parallel" && touch "$HOME/.parallel/will-cite"
unset XDG_CONFIG_HOME XDG_CONFIG_DIRS PARALLEL_HOME
SIM="$TOPO/h100-80gb.topo"
unset PARALLEL PARALLEL_SHELL
export LC_ALL=C

# --- fixtures ----------------------------------------------------------------------
F="$T/fix"
mkdir -p "$F/d.dir/sub" "$F/in"
printf 'a\nb\nc\n' >"$F/abc"
printf '1\n2\n3\n' >"$F/123"
printf 'x\n\ny z\n  sp  \n' >"$F/lines"
printf 'f/one.txt\n/abs/two.tar.gz\nplain\n.hidden\ndir/\nd.dir/x.y.z\n' >"$F/paths"
printf 'one\0two words\0three\nlines\0' >"$F/nul"
printf 'a,b,c\n1,2,3\n,,\n' >"$F/csv"
printf 'name\tsize\nfoo\t1\nbar\t22\n' >"$F/tsv"
printf 'k1:v1\nk2:v2\n' >"$F/kv"
printf 'echo one\necho two; echo three\nfalse\n' >"$F/cmds"
printf 'r1\r\nr2\r\n' >"$F/crlf"
printf '%s\n' 'it'\''s' 'a"b' '$HOME' '`id`' '*' '-n' '--x' 'ü∂' ' lead' 'trail ' 'a\b' >"$F/awk"
for f in x y z; do printf '%s\n%s\n' "$f" "$f$f" | gzip >"$F/in/$f.gz"; done
head -c 100000 /dev/zero | tr '\0' v >"$F/big"
# the tutorial's files (man parallel_tutorial, "Prerequisites")
printf 'A\nB\nC\n' >"$F/abc-file"
printf 'D\nE\nF\n' >"$F/def-file"
printf 'A\0B\0C\0' >"$F/abc0-file"
printf 'A_B_C_' >"$F/abc_-file"
printf 'f1\tf2\nA\tB\nC\tD\n' >"$F/tsv-file.tsv"
seq 8 >"$F/num8"
seq 128 >"$F/num128"
seq 30000 >"$F/num30000"
seq 300000 >"$F/num300000"
(echo %head1; echo %head2; seq 10) >"$F/num_%header"
printf 'HHHHAAABBBCCC' >"$F/fixedlen"
# files for the examples (man parallel_examples)
mkdir -p "$F/ex/sub" "$F/ex/destdir"
for f in a b c; do echo "<p>$f FOO BAR</p>" >"$F/ex/$f.html"; echo "log $f" >"$F/ex/$f.log"; done
echo "<p>sub</p>" >"$F/ex/sub/s.html"
for f in p q; do echo "$f$f" | gzip >"$F/ex/$f.gz"; done
printf 'aardvark\nbabble\ncab\ndab\neach\n' >"$F/ex/in.txt"
printf 'Name\tE-mail\nJoe\tjoe@x\nAnn\tann@y\n' >"$F/ex/addressbook.tsv"
printf 'ex/a.html\nex/none\nex/b.log\n' >"$F/ex/file_list"
printf 'echo one\necho two\n' >"$F/ex/jobs_to_run"
printf 'r1\nr2\nr3\n' >"$F/ex/xlist"
printf 'x\ny\n' >"$F/ex/ylist"

# the fixtures date from 2001: a file a case left is newer, or not among them
find "$F" -exec touch -h -d 2001-01-01 {} +
(cd "$F" && find . -type f | LC_ALL=C sort) >"$T/fix.list"

P_=0 D_=0 R_=0 FAILED=""
norm_tree() {
	# the files the case left (new ones, changed fixtures): joblogs by their stable columns, others whole
	(cd "$1" && { find . -type f -newermt 2001-01-02; find . -type f | LC_ALL=C sort | LC_ALL=C comm -23 - "$T/fix.list"; } |
		LC_ALL=C sort -u | while read -r f; do
		# usage.json: gpupack's own per-task usage (doc/run.md); parallel writes none
		case $f in *.gpupack | */.parallel/tmp/* | */usage.json) continue ;; esac
		if head -n 1 "$f" | grep -q '^Seq	Host	Starttime	JobRuntime	Send	Receive	Exitval	Signal	Command$'; then
			printf '== %s (joblog)\n' "$f"
			awk -F'\t' 'NR > 1 { print $1 "\t" $6 "\t" $7 "\t" $8 "\t" $9 }' "$f" | LC_ALL=C sort -n
		elif head -n 1 "$f" | grep -q '^Seq[,	]Host[,	]Starttime\|^{ "Seq": '; then
			printf '== %s (--results file)\n' "$f"
			no_times <"$f"
			echo
		else
			printf '== %s\n' "$f"
			cat "$f"
			echo
		fi
	done)
}

# the Starttime and JobRuntime of --results FILE.csv, .tsv, .json
no_times() {
	sed -E 's/^([0-9]+[,	][^,	]*[,	])[0-9.]+([,	])[0-9. ]+([,	])/\1T\2R\3/;
		s/"Starttime": [0-9.]+, "JobRuntime": [0-9.]+/"Starttime": T, "JobRuntime": R/'
}

P_parallel() { timeout 60 parallel "$@"; }
P_gpupack() { timeout 60 $GPUPACK --sim "$SIM" run --share timeslice "$@"; }

# Cases are queued, then run JOBS at a time, each side in its own copy of the fixtures:
# gpupack's side of every case first, then GNU parallel's where needed (below), then
# compared in order.
N_=0
declare -a C_NAME C_CASE C_STDIN C_ORDER
queue() {
	# PARALLEL_DIFF_ONLY=REGEX: only the cases whose names match (while working on them)
	[ -n "${PARALLEL_DIFF_ONLY:-}" ] && ! [[ $1 =~ $PARALLEL_DIFF_ONLY ]] && return
	C_NAME[N_]=$1 C_CASE[N_]=$2 C_STDIN[N_]=$3 C_ORDER[N_]=$4
	N_=$((N_ + 1))
}

# side I p|g: run case I's snippet (calling P) in a fresh copy of the fixtures; what it
# did (stdout, sorted unless the case orders it; the exit status; the files it left) in
# $T/cI.p.res or .g.res, stderr in .err. The sanitizer pass keeps only stderr.
side() {
	local i=$1 dir="$T/c$1.$2"
	rm -rf "$dir"
	cp -rp "$F" "$dir"
	if [ "$2" = p ]; then P() { P_parallel "$@"; }; else P() { P_gpupack "$@"; }; fi
	(cd "$dir" && eval "${C_CASE[i]}" <"${C_STDIN[i]:-/dev/null}" >"$dir.out" 2>"$dir.err"; echo $? >"$dir.rc")
	if [ "${GPUPACK_TEST_PASS:-}" != san ]; then
		# the case's own directory (pwd) and the scratch one are named alike on both sides and in every run
		{
			if [ "${C_ORDER[i]}" = sorted ]; then
				sed -e "s|$dir|DIR|g" -e "s|$T|T|g" "$dir.out" | LC_ALL=C sort
			else
				sed -e "s|$dir|DIR|g" -e "s|$T|T|g" "$dir.out"
			fi
			printf '== exit %s\n' "$(cat "$dir.rc")"
			norm_tree "$dir"
		} >"$dir.res"
	fi
	rm -rf "$dir"
}

# sides SIDE I...: those cases' SIDE, PARALLEL_DIFF_JOBS (3) at a time
sides() {
	local s=$1 i max=${PARALLEL_DIFF_JOBS:-3}
	shift
	for i in "$@"; do
		while [ "$(jobs -rp | wc -l)" -ge "$max" ]; do wait -n; done
		side "$i" "$s" &
	done
	wait
}

# GNU parallel's answers, recorded: tests/cli/parallel-diff.golden holds, for one version of
# GNU parallel, CPU count and set of fixtures, a hash of each case and of what parallel did.
# A case whose gpupack side did exactly that passes without running parallel again; every
# other case runs parallel live and compares the two, and so does every thirtieth case: where
# one of those does not match the recording, every case runs live. PARALLEL_DIFF_LIVE=1 runs every case
# live; PARALLEL_DIFF_RECORD=FILE runs every case live and writes FILE from parallel's side.
GOLDEN="$GPUPACK_SRC/tests/cli/parallel-diff.golden"
golden_head() {
	printf '# %s; %s CPUs; fixtures %s\n' "$(parallel --version 2>/dev/null | head -n 1)" "$(nproc)" \
		"$(cd "$F" && xargs -d "\n" cat <"$T/fix.list" | sha1sum | cut -c1-40)"
}
# keyed I...: "I key" of each case: a hash of its snippet, stdin and ordering
keyed() {
	local i
	mkdir -p "$T/keys"
	for i in "$@"; do
		printf '%s\n%s\n%s\n' "${C_CASE[i]}" "${C_STDIN[i]#"$F"/}" "${C_ORDER[i]}" >"$T/keys/$i"
	done
	(cd "$T/keys" && sha1sum "$@") | awk '{ print $2, $1 }'
}
# hashed SIDE I...: "I hash" of each case's .res
hashed() {
	local s=$1 i
	shift
	(cd "$T" && for i in "$@"; do printf 'c%s.%s.res\n' "$i" "$s"; done | xargs sha1sum) |
		sed -E 's/^([0-9a-f]+) +c([0-9]+)\..*/\2 \1/'
}

declare -a DONE_ # DONE_[I]=1: case I matched parallel's recorded answer
LIVE_=0 REC_=0
run_all() {
	local i all=() live=()
	for ((i = 0; i < N_; i++)); do all+=("$i"); done
	sides g "${all[@]}"
	[ "${GPUPACK_TEST_PASS:-}" = san ] && return
	if [ -z "${PARALLEL_DIFF_LIVE:-}${PARALLEL_DIFF_RECORD:-}" ] && [ -f "$GOLDEN" ] &&
		[ "$(head -n 1 "$GOLDEN")" = "$(golden_head)" ]; then
		keyed "${all[@]}" >"$T/keys.txt"
		hashed g "${all[@]}" >"$T/g.txt"
		while read -r i; do DONE_[i]=1; REC_=$((REC_ + 1)); done < <(awk '
			FILENAME == ARGV[1] { if (FNR > 1) p[$1] = $2; next }
			FILENAME == ARGV[2] { key[$1] = $2; next }
			(key[$1] in p) && p[key[$1]] == $2 { print $1 }' "$GOLDEN" "$T/keys.txt" "$T/g.txt")
	elif [ -f "$GOLDEN" ] && [ -z "${PARALLEL_DIFF_LIVE:-}${PARALLEL_DIFF_RECORD:-}" ]; then
		diag "parallel-diff.golden was recorded with $(head -n 1 "$GOLDEN" | cut -c3-), here $(golden_head | cut -c3-): every case runs live"
	fi
	# every thirtieth case runs GNU parallel live all the same: where one of them does not do what
	# the recording says, the recording is stale here and every case runs live
	local sample=()
	for i in "${all[@]}"; do
		[ -n "${DONE_[i]:-}" ] && [ $((i % 30)) -eq 0 ] && sample+=("$i")
	done
	if [ ${#sample[@]} -gt 0 ]; then
		sides p "${sample[@]}"
		hashed p "${sample[@]}" >"$T/sample.txt"
		stale=$(awk '
			FILENAME == ARGV[1] { if (FNR > 1) p[$1] = $2; next }
			FILENAME == ARGV[2] { key[$1] = $2; next }
			p[key[$1]] != $2 { n++ } END { print n + 0 }' "$GOLDEN" "$T/keys.txt" "$T/sample.txt")
		if [ "$stale" -gt 0 ]; then
			diag "GNU parallel here did not do what parallel-diff.golden recorded in $stale of ${#sample[@]} sampled cases: every case runs live"
			DONE_=()
			REC_=0
		fi
		for i in "${sample[@]}"; do
			[ -n "${DONE_[i]:-}" ] && unset "DONE_[i]" && REC_=$((REC_ - 1))
		done
	fi
	for i in "${all[@]}"; do [ -n "${DONE_[i]:-}" ] || [ -f "$T/c$i.p.res" ] || live+=("$i"); done
	LIVE_=$((${#live[@]} + ${#sample[@]}))
	[ ${#live[@]} -gt 0 ] && sides p "${live[@]}"
	if [ -n "${PARALLEL_DIFF_RECORD:-}" ]; then
		keyed "${all[@]}" >"$T/keys.txt"
		hashed p "${all[@]}" >"$T/p.txt"
		{ golden_head; awk 'FILENAME == ARGV[1] { key[$1] = $2; next } { print key[$1], $2 }' "$T/keys.txt" "$T/p.txt" |
			LC_ALL=C sort; } >"$PARALLEL_DIFF_RECORD"
	fi
}

compare() {
	local i=$1 name=${C_NAME[$1]} a="$T/c$1.p" b="$T/c$1.g"
	if [ "${GPUPACK_TEST_PASS:-}" = san ]; then
		if ! grep -Eq 'Sanitizer|runtime error' "$b.err"; then
			ok 0 "$name (gpupack under the sanitizers)"
			P_=$((P_ + 1))
		else
			ok 1 "$name (gpupack under the sanitizers)"
			grep -E -A 6 'Sanitizer|runtime error' "$b.err" | head -n 12 | sed 's/^/#   /'
		fi
		return
	fi
	if [ -n "${DONE_[i]:-}" ]; then
		ok 0 "$name (as GNU parallel's recorded answer)"
		P_=$((P_ + 1))
	elif cmp -s "$a.res" "$b.res"; then
		ok 0 "$name"
		P_=$((P_ + 1))
	else
		ok 1 "$name"
		FAILED="$FAILED|$name"
		diag "  parallel, then gpupack:"
		diff "$a.res" "$b.res" | head -n 12 | sed 's/^/#   /'
		head -n 2 "$b.err" | sed 's/^/#   gpupack stderr: /'
	fi
}

# ordered when the case orders its output itself (in ORDER_: no subshell, as 592 cases are
# queued in each pass and every fork of this shell copies its arrays)
order_of() {
	case " $* " in
	*" -k "* | *" -j1 "* | *" -j 1 "* | *" --keep-order "* | *" -kj1 "*) ORDER_=exact ;;
	*) ORDER_=sorted ;;
	esac
}

# the arguments quoted for the shell, in QUOTED_
quote_args() {
	local a q
	QUOTED_=""
	for a in "$@"; do printf -v q '%q' "$a"; QUOTED_="$QUOTED_ $q"; done
}

t() { local name=$1; shift; quote_args "$@"; order_of "$@"; queue "$name" "P$QUOTED_" "" "$ORDER_"; }
tin() { local name=$1 file=$2; shift 2; quote_args "$@"; order_of "$@"; queue "$name" "P$QUOTED_" "$F/$file" "$ORDER_"; }
ts() { order_of $2; queue "$1" "$2" "" "$ORDER_"; }

refused() {
	local name=$1; shift
	run P_gpupack "$@"
	if [ "$rc" -eq 255 ] && [ -z "$out" ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] &&
		printf '%s' "$err" | grep -q '^gpupack: run: '; then
		ok 0 "refused: $name"
		R_=$((R_ + 1))
	else
		ok 1 "refused: $name"
		diag "  rc $rc, err: $err"
	fi
}

doc() {
	local name=$1
	if eval "$2" >/dev/null 2>&1; then
		ok 0 "documented difference: $name"
		D_=$((D_ + 1))
	else
		ok 1 "documented difference: $name"
	fi
}

# === quoted shell command lines: the way most people write parallel ====================
t "a pipe inside the command" -k 'zcat {} | wc -l' ::: in/x.gz in/y.gz
t "redirection to {.}.out" 'zcat {} > {.}.out' ::: in/x.gz in/z.gz
t "'>' as a word redirects too" echo {} '>' {}.out ::: a b
t "&& and ||" -k '[ {} -gt 1 ] && echo big {} || echo small {}' ::: 1 2 3
t "a variable of the shell" -k 'echo $HOME {}' ::: a
t "a variable set in the line" -k 'x={}; echo ${x}x' ::: a b
t "command substitution" -k 'echo $(echo {} | tr a-z A-Z)' ::: ab cd
t "a for loop" -k 'for i in 1 2; do echo {}-$i; done' ::: a b
t "a subshell and ;" -k '(echo {}; echo again {})' ::: a
t "braces in double quotes" -k echo '"[{}]"' ::: 'a b' c
t "the input appended to a quoted line" -k 'echo pre' ::: a 'b c'
t "several commands per line" -k 'echo {}; echo {} >&2; echo done' ::: a
t "stderr is not stdout" -k 'echo {} >&2' ::: a
t "exit status of a line" 'exit {}' ::: 0 1 2
t "bash syntax: [[ ]]" -k '[[ {} == a* ]] && echo yes {}' ::: abc xyz
t "an exported function" -k 'f() { echo f:$1; }; f {}' ::: a b
t "awk in single quotes" -k "awk '{print \$2}' <<< {}" ::: 'a b'
t "sh -c and its own argument" -k sh -c 'echo "$0"' {} ::: a

# === values are quoted: nothing from an input runs ====================================
t "a value with ; rm" -k echo ::: '; rm -rf d.dir'
t "\$(...) and backticks in values" -k echo ::: '$(echo hi)' '`echo hi`'
t "quotes in values" -k echo ::: "it's" 'a"b' "'" "''"
t "globs in values stay" -k echo ::: '*' '?' '[a]'
t "a value with a newline (-0)" -k -0 echo '[{}]' :::: nul
t "a value with a newline splits without -0" -k echo '[{}]' ::: "$(printf 'a\nb')"
t "empty values" -k echo '[{}]' ::: '' a ''
t "spaces in values" -k echo '[{}]' ::: ' a' 'b ' 'c d'
t "unicode" -k echo ::: 'ü' '∂ƒ' '日本'
t "leading dashes" -k echo ::: -n -e --help
t "leading dashes to printf" -k printf '%s\n' ::: -n --x
t "a value that is a shell keyword" -k echo ::: if then '{' '}'
tin "awkward lines from a file" awk -k echo '<{}>'
tin "awkward lines, no replacement string" awk -k printf '%s|\n'

# === replacement strings ===========================================================
t "{} {.} {/} {//} {/.}" -k echo {} {.} {/} {//} {/.} ::: a/b.c d.e/f g
tin "paths of every shape" paths -k echo {} {.} {/} {//} {/.}
t "dots in directories" -k echo {.} {/.} {//} ::: d.dir/x d.dir/x.y a.b.c/d.e
t "{#} and {%} with -j1" -j1 echo {#} {%} ::: a b c
t "{#} alone: nothing appended" -k echo {#} ::: a b
t "{1} {2} positional" -k echo {2} {1} ::: a b ::: 1 2
t "{2.} {1/} {1//} {1/.}" -k echo {2.} {1/} {1//} {1/.} ::: a/b.c ::: x/y.z
t "{-1} {-2}" -k echo {-1} {-2} ::: a ::: b ::: c
t "{3} out of range" -k echo '[{3}]' ::: a ::: b
t "not replacement strings" -k echo '{foo}' '{' '}' '{ }' '{1x}' ::: a
t "inside words" -k echo 'pre{}post' 'x{.}y' '{#}{#}' ::: a.b
t "-I ,,: another {}" -k -I ,, echo ,, {} ::: a b
t "-I {x}: positional {1x}" -k -I '{x}' echo {x} {1x} ::: a ::: b
t "a replacement string as the command" -k {} ::: 'echo a' 'echo b c'
t "{}-{} as the command" -k {1} {2} ::: echo ::: 'a b'
tin "no command: the inputs are the commands" cmds -k
t "V={} before the command" -k 'V={}; echo "$V"' ::: 'a b'

# === several sources ================================================================
t "cross product order" -k echo ::: a b ::: 1 2
t "three sources" -k echo ::: a b ::: 1 2 ::: x y
t "{} with several sources: a word each" -k printf '<%s>' {} ::: 'a b' c ::: 'd e'
t "{} with several sources, context" -k echo x{}y ::: a b ::: 1
t ":::: FILE" -k echo :::: abc
t ":::: two files" -k echo :::: abc 123
t "-a FILE" -k -a abc echo
t "-a FILE and :::" -k -a abc echo ::: 1 2
t ":::: with ::: after" -k echo :::: abc ::: x
tin "stdin lines" lines -k echo '[{}]'
tin ":::: - is stdin" lines -k echo '[{}]' :::: -
t ":::+ pairs" -k echo ::: a b c :::+ 1 2 3
t ":::+ to the shorter" -k echo ::: a b c :::+ 1 2
t ":::+ then a cross" -k echo ::: a b :::+ 1 2 ::: x y
t "a cross then :::+" -k echo ::: x y ::: a b :::+ 1 2
t "::::+ pairs files" -k echo :::: abc ::::+ 123
t "--link recycles" -k --link echo ::: a b c ::: 1 2
t "--link with files" -k --link echo :::: abc 123
t "an empty source in a cross product" -k echo '[{1}]' '[{2}]' ::: a b :::
t "an empty source first" -k echo '[{1}]' '[{2}]' ::: ::: a b
t "every source empty" -k echo x ::: :::
t "an empty file" -k echo x :::: /dev/null
t "an empty file with a source" -k echo '[{1}]' '[{2}]' ::: a :::: /dev/null
t "--arg-sep" -k --arg-sep ,, echo ,, a b
t "--arg-file-sep" -k --arg-file-sep // echo // abc

# === -n -N -X -m =======================================================================
t "-n2" -k -n2 echo ::: 1 2 3 4 5
t "-n2 with {} in a word" -k -n2 echo x{}y ::: 1 2 3 4 5
t "-N2 positional" -k -N2 echo {1}-{2} ::: 1 2 3 4 5
t "-N2 {}" -k -N2 echo x{}y ::: 1 2 3
t "-N0" -k -N0 echo hi ::: 1 2 3
t "-N0 with {#}" -k -N0 echo {#} ::: a b c
t "-n2 with two sources" -k -n2 echo ::: 1 2 3 ::: a b
t "-N1 with two sources" -k -N1 echo {1} {2} ::: 1 2 ::: a b
t "-X" -j1 -X echo pre{}post ::: 1 2 3
t "-X spreads over the slots" -k -X echo ::: 1 2 3 4 5
t "-m" -j1 -m echo pre{}post ::: 1 2 3
t "-m spreads" -k -m echo ::: 1 2 3 4 5 6 7
t "-X {.}.o {}" -j1 -X echo {.}.o {} ::: a.c b.c
t "--xargs" -k --xargs echo ::: 1 2 3
tin "-X fills lines to parallel's limit" lines -j1 -X echo
ts "-X on 30000 inputs: lines of parallel's length" 'seq 30000 | P -j1 -X echo | awk "{ print NF }"'
t "-s: a shorter line" -k -j1 -s 20 -X echo ::: 1 2 3 4 5 6 7 8 9 10

# === input formats ===================================================================
t "-0" -k -0 echo '[{}]' :::: nul
t "--null" -k --null echo '[{}]' :::: nul
t "-d ," -k -d , echo '[{}]' ::: a,b c
tin "-d , from stdin" csv -k -d , echo '[{}]'
t "-d '\\r\\n'" -k -d '\r\n' echo '[{}]' :::: crlf
t "-d '\\t'" -k -d '\t' echo '[{}]' ::: "$(printf 'a\tb')"
t "--colsep ," -k --colsep , echo {3} {1} :::: csv
t "--colsep '\\t'" -k --colsep '\t' echo {2}={1} :::: tsv
t "--colsep with {}" -k --colsep , echo {} :::: csv
t "--colsep regex" -k --colsep '[0-9]+' echo {1} {2} {3} ::: a1b22c
t "--colsep ' +' keeps empty columns" -k --colsep ' +' echo '[{1}]' '[{2}]' '[{3}]' ::: '  a  b '
t "--colsep with two sources" -k --colsep : echo {1} {2} {3} {4} :::: kv ::: p:q
t "--header : with :::" -k --header : echo {a} {b} ::: a 1 2 ::: b x y
t "--header : --colsep" -k --header : --colsep '\t' echo {size}:{name} :::: tsv
t "--header : {name.}" -k --header : echo {f.} {f/} ::: f d/a.b
t "--trim lr" -k --colsep , --trim lr echo '[{1}]' ::: ' a , b '
t "-r skips empty lines" -k -r echo '[{}]' :::: lines
t "-E stops at a value" -k -E stop echo ::: a b stop c
t "-E '' is no end string" -k -E '' echo ::: a '' b
tin "CR-NL lines" crlf -k echo '[{}]'

# === output =======================================================================
t "--tag" -k --tag echo hi ::: a b
t "--tag with two sources" -k --tag echo hi ::: a b ::: 1 2
t "--tag on stderr too" -k --tag 'echo out {}; echo err {} >&2' ::: a
t "--tag, a line without a newline" -k --tag printf 'x\ny' ::: a
t "--tagstring" -k --tagstring '<{}>' echo hi ::: a b
t "--tagstring {1}-{2}" -k --tagstring '{1}-{2}' echo x ::: a b ::: 1
t "-v" -k -v echo hi ::: a 'b c'
t "-v --tag" -k -v --tag echo ::: a
t "--dry-run" -k --dry-run echo ::: "it's" 'a b' '$x' '' '-n' 'ü' 'a*' '~'
t "--dry-run --tag" -k --dry-run --tag echo ::: a
t "--dry-run writes no joblog" -k --dry-run --joblog jl echo ::: a
t "--dry-run --results: parallel's seq and stderr, nothing printed" -k --dry-run --results res echo ::: a b
t "-q" -k -q printf '<%s>' 'a b' {} '|' ::: 'c d'
t "-q keeps \$ literal" -k -q echo '$HOME' ::: x
t "--dry-run -q" -k --dry-run -q echo 'a b' '' {} ::: "it's"
t "--line-buffer" --line-buffer 'echo {}; sleep 0.1; echo {}' ::: a b
t "--ungroup with -j1" -j1 --ungroup 'echo {}; echo again {}' ::: a b
t "--group" -k --group echo ::: a b
t "-k keeps order" -k 'sleep 0.{}; echo {}' ::: 3 1 2
t "without -k: every line" 'sleep 0.{}; echo {}' ::: 3 1 2
t "--shuf: the same tasks" --shuf echo ::: a b c d e
t "--delay" -j2 --delay 0.1 echo ::: a b c
t "large outputs" -k -j2 'head -c 3000000 /dev/zero | tr "\0" {}' ::: a b

# === environment =====================================================================
t "\$PARALLEL_SEQ" -k 'echo $PARALLEL_SEQ {}' ::: a b c
t "\$PARALLEL_JOBSLOT with -j1" -j1 'echo $PARALLEL_JOBSLOT {}' ::: a b
ts "--env NAME" 'export MYVAR=val; P -k --env MYVAR "echo \$MYVAR {}" ::: a'
t "-j 0" -j0 echo ::: a b c
t "-j 50%" -j50% echo ::: a b c
t "-j +1" -j+1 echo ::: a b c
t "-j -1" -j-1 echo ::: a b c
t "--will-cite" --will-cite -k echo ::: a
t "--nice" -k --nice 10 'nice; echo {}' ::: a
t "--wd" -k --wd /tmp 'pwd; echo {}' ::: a
t "--tmpdir is the tasks' \$TMPDIR" -k --tmpdir /var/tmp 'echo $TMPDIR {}' ::: a
t "clustered short options" -kj2 echo ::: a b c
t "--opt=value" -k --jobs=2 --max-args=2 echo ::: 1 2 3
t "-a twice" -k -a abc -a 123 echo
t ":::: f1 :::: f2" -k echo :::: abc :::: 123
t "-- before the command" -k -- echo ::: a
t "--skip-first-line" -k --skip-first-line echo :::: abc
t "--process-slot-var" -k -j1 --process-slot-var SLOT 'echo $SLOT {}' ::: a b
t "--replace=STR" -k --replace=@ echo @ ::: a
t "--no-keep-order after -k" -k --nok -j1 echo ::: a b
t "-C is --colsep" -k -C , echo {2} ::: a,b
t "--eof=STR" -k --eof=_ echo ::: a _ b
t "old spellings: --keeporder --maxargs --argsep" --keeporder --maxargs 2 --argsep ,, echo ,, 1 2 3
t "--total-jobs (a count for the progress line)" -k --total-jobs 3 echo ::: a b c
t "--jobs 1 long form" --jobs 1 echo ::: a b

# === exit status, retries, halt, timeout ===================================================
t "failures counted" 'exit {}' ::: 0 1 0 3
ts "more than 100 failures: 101" 'seq 102 | P false'
t "a missing command: 127" -k no-such-command-gpupack ::: a
t "a missing command in a line" -k 'no-such-command-gpupack {}' ::: a
t "a task killed by a signal" --joblog jl 'kill -9 $$; : {}' ::: a
t "a task killed by SIGTERM" --joblog jl 'kill -TERM $$; : {}' ::: a
t "joblog: exit values and commands" -k --joblog jl 'echo {}; exit {}' ::: 0 1 2
t "joblog with quoting" -k --joblog jl echo ::: 'a b' "it's"
t "--retries 3: three tries in all" --retries 3 --joblog jl 'echo x >> c{}; exit 1' ::: a
t "--retries: succeeds on the second try" --retries 2 'echo x >> c{}; [ $(wc -l < c{}) -ge 2 ]' ::: a
t "--retries: only the last try's output" --retries 3 'echo try $(wc -l < c{} 2>/dev/null); echo x >> c{}; exit 1' ::: a
t "--halt now,fail=1" -j1 --joblog jl --halt now,fail=1 'echo {}; exit {}' ::: 0 3 0
t "--halt soon,fail=1" -j1 --halt soon,fail=1 'echo {}; exit {}' ::: 0 3 0
t "--halt now,fail=2" -j1 --halt now,fail=2 'echo {}; exit {}' ::: 0 3 4 0 5
t "--halt soon,fail=2" -j1 --halt soon,fail=2 'echo {}; exit {}' ::: 0 3 4 0 5
t "--halt now,fail=50%" -j1 --halt now,fail=50% 'echo {}; exit {}' ::: 0 3 4 0 5
t "--halt soon,fail=30%" -j1 --halt soon,fail=30% 'echo {}; exit {}' ::: 0 0 0 3 4 0 5
t "--halt now,fail=50% never reached" -j1 --halt now,fail=50% 'exit {}' ::: 0 1 0 0 0 0
t "--halt now,success=1" -j1 --halt now,success=1 'echo {}; exit {}' ::: 3 0 4
t "--halt now,success=2" -j1 --halt now,success=2 'echo {}; exit {}' ::: 3 0 4 0 2
t "--halt now,done=2" -j1 --halt now,done=2 'echo {}; exit {}' ::: 3 0 4 0 2
t "--halt soon,done=2, none failed" -j1 --halt soon,done=2 'echo {}; exit {}' ::: 0 0 4 0 2
t "--halt now,done=1" -j1 --halt now,done=1 'echo {}; exit {}' ::: 0 0
t "--halt 2 (now,fail=1)" -j1 --halt 2 'echo {}; exit {}' ::: 0 3 0
t "--halt 1 (soon,fail=1)" -j1 --halt 1 'echo {}; exit {}' ::: 0 3 0
t "--halt now,fail=1 on a signal" -j1 --halt now,fail=1 'echo {}; kill -9 $$' ::: 0
t "--halt never" -j1 --halt never 'exit {}' ::: 1 2
ts "--halt now: killed tasks are not logged; --resume reruns them" 'P -j2 --joblog jl --halt now,fail=1 "[ -e ok ] || sleep {}; echo {}; [ -e ok ] || exit \$(( {} < 2 ))" ::: 3 1; touch ok; P -j2 -k --joblog jl --resume --halt now,fail=1 "[ -e ok ] || sleep {}; echo {}; [ -e ok ] || exit \$(( {} < 2 ))" ::: 3 1'
t "--timeout" --joblog jl --timeout 1 'echo a{}; sleep {}' ::: 5 0
t "--timeout N%" -j1 --joblog jl --timeout 300% 'sleep {}; echo {}' ::: 0.1 0.1 0.1 3
t "--halt-on-error (old name)" -j1 --halt-on-error 2 'exit {}' ::: 0 2 0

# === joblog, resume ====================================================================
ts "--resume skips what ran" 'P -k --joblog jl echo ::: a b; P -k --joblog jl --resume echo ::: a b c d'
ts "--resume-failed reruns the failed" 'echo 1 >f; P -k --joblog jl "echo {} \$(cat f); exit \$(( {} * \$(cat f) ))" ::: 0 1 2; echo 0 >f; P -k --joblog jl --resume-failed "echo {} \$(cat f); exit \$(( {} * \$(cat f) ))" ::: 0 1 2'
ts "--retry-failed runs the joblog's failed lines" 'P -k --joblog jl "echo {}; exit {}" ::: 0 1 2 0; P -k --retry-failed --joblog jl'
ts "--retry-failed ignores the command given" 'P -k --joblog jl "echo {}; exit {}" ::: 0 1; P -k --retry-failed --joblog jl "echo changed {}" ::: 5 6'
ts "--joblog +FILE appends" 'P -k --joblog jl echo ::: a; P -k --joblog +jl echo ::: b'
ts "--joblog +FILE to a new file: no header" 'P -k --joblog +jl echo ::: a b; cut -f 1,7,9 jl; rm jl'
ts "--joblog - on stdout" 'P -k --joblog - "echo {}; exit {}" ::: 0 1 | cut -f1,7,8,9'

# === --results ========================================================================
t "--results DIR" --results res echo ::: a 'b c'
t "--results: stderr and seq" --results res 'echo out {}; echo err {} >&2' ::: x y
t "--results with two sources" --results res echo ::: a b ::: 1
t "--results: a / in a value" --results res echo ::: 'd/e' 'f\g'
t "--results: a tab in a value" --results res echo ::: "$(printf 'a\tb')"
t "--results: dots and empty values" -j1 --results res echo ::: . .. '' .x
t "--results: a long value" --results res echo ::: "$(head -c 300 /dev/zero | tr '\0' n)"
t "--results with --header names" --header : --results res echo ::: x 1 2 ::: y a
t "--results DIR/ with a replacement string" --results 'r/{}/' echo ::: a b
t "--results FILE with a replacement string" --results 'r/{}.out' echo ::: a b
t "--results: exit status kept" --results res 'exit {}' ::: 0 1
t "--results and --joblog" --results res --joblog jl echo ::: a

t "--results FILE.csv" -j1 --results out.csv 'echo {}; echo err{} >&2; exit {2}' ::: a 'b,"c' ::: 0 1
t "--results FILE.tsv" -j1 --results out.tsv 'printf "x\ty\n"; echo {}' ::: a "$(printf 'b\tc')"
t "--results FILE.json" -j1 --results out.json echo ::: a 'b"c' ::: 1
t "--results FILE.CSV (any case)" -j1 --results out.CSV echo ::: a
t "--results FILE.csv with --header" -j1 --header : --results out.csv echo ::: x 1 2 ::: y a
t "--results FILE.csv: ten values (V9, W0)" -j1 --results out.csv echo ::: 1 ::: 2 ::: 3 ::: 4 ::: 5 ::: 6 ::: 7 ::: 8 ::: 9 ::: 10
ts "--results -.csv on stdout" 'P -j1 --results -.csv seq ::: 10 ::: 12 13 | no_times'
ts "--results -.json on stdout" 'P -j1 --results -.json echo ::: a b | no_times'
t "the examples' my.csv for R" -j1 --results my.csv seq ::: 10 20 30
ts "--resume --results DIR without --joblog" 'P --results res echo ::: a b; rm -r res/1/b; P --resume --results res "echo again {}" ::: a b c'
ts "--resume --results DIR/ template" 'P --results "r/{}/" echo ::: a b; P --resume --results "r/{}/" "echo again {}" ::: a b c'

# === lengths ==============================================================================
t "a 100 KB value is refused as parallel refuses it" echo :::: big
t "a 100 KB value through a pipe line" 'echo {} | wc -c' :::: big
t "60 KB fits" -k 'echo {} | wc -c' ::: "$(head -c 60000 /dev/zero | tr '\0' x)"

# === options from profiles, $PARALLEL; more of parallel's options ========================
ts "\$PARALLEL's options" 'PARALLEL="-k --tag" P echo ::: a b'
ts "\$PARALLEL: a word that is not an option starts the command" 'PARALLEL="-k echo" P ::: a b'
ts "\$PARALLEL with quotes" 'PARALLEL="-k --tagstring '"'"'<{}>'"'"'" P echo ::: a'
ts "~/.parallel/config" 'mkdir -p h/.parallel; printf "# mine\n-k --tag\n" >h/.parallel/config; HOME=$PWD/h P echo ::: a b'
ts "-J profile instead of config" 'mkdir -p h/.parallel; echo --tag >h/.parallel/tg; echo -v >h/.parallel/config; HOME=$PWD/h P -k -J tg echo ::: a b'
ts "--profile, two of them" 'mkdir -p h/.parallel; echo --tag >h/.parallel/a; echo --dry-run >h/.parallel/b; HOME=$PWD/h P -k --profile a --profile b echo ::: x'
ts "a missing profile is ignored" 'mkdir -p h/.parallel; HOME=$PWD/h P -k -J nosuch echo ::: a'
ts "--plain ignores config and \$PARALLEL" 'mkdir -p h/.parallel; echo --tag >h/.parallel/config; HOME=$PWD/h PARALLEL=-v P -k --plain echo ::: a'
ts "the command line after \$PARALLEL" 'PARALLEL=--tag P -k --tagstring x echo ::: a'
t "-L 2" -k -L 2 echo ::: a b c d e
tin "-L: a line ending in a blank goes on" lines -k -L1 echo '[{}]'
t "-L 2 with -X" -k -L2 -X echo 'x{}y' ::: a b c d e
t "-l: one line" -k -l echo ::: a 'b ' c
t "--max-lines=2" -k --max-lines=2 echo ::: a b c
t "--shellquote" --shellquote ::: 'a b' "c'd" '$x'
t "--shellquote a command" --shellquote echo '{}' ::: 'x y'
ts "--shellquote a line from stdin" 'echo "perl -e '"'"'print \"@ARGV\\n\"'"'"'" | P --shellquote'
t "--max-line-length-allowed" --max-line-length-allowed
t "--number-of-cores" --number-of-cores
t "--number-of-threads" --number-of-threads
t "--number-of-sockets" --number-of-sockets
t "--number-of-cpus" --number-of-cpus
ts "--minversion" 'P --minversion 20130722 && echo at least'
ts "--minversion too new" 'P --minversion 20990101 || echo older $?'
t "--extensionreplace" -k --extensionreplace ,, echo ,, ::: A/B.C
t "--er" -k --er ,, echo ,, {} ::: A/B.C
t "--basenamereplace" -k --basenamereplace ,, echo ,, ::: A/B.C
t "--bnr" -k --bnr ,, echo ,, ::: A/B.C
t "--dirnamereplace" -k --dirnamereplace ,, echo ,, ::: A/B.C
t "--basenameextensionreplace" -k --basenameextensionreplace ,, echo ,, ::: A/B.C
t "--seqreplace" -k --seqreplace ,, echo ,, ::: A B C
t "--slotreplace" -j1 --slotreplace ,, echo ,, ::: A B C
t "--replace=,, as -I" -k --replace=,, echo ,, ::: a
t "-e STR as -E" -k -estop echo ::: a stop b
t "--colsep trims the columns" -k --colsep , echo '[{1}]' '[{2}]' ::: 'a.png, 0.5' ' b ,c '
tin "--colsep on CR-NL lines" crlf -k --colsep , echo '[{1}]'
t "--colsep --trim n keeps the blanks" -k --colsep , --trim n echo '[{1}]' '[{2}]' ::: ' a , b '
t "--colsep --trim l" -k --colsep , --trim l echo '[{1}]' '[{2}]' ::: ' a , b '
t "--colsep: {} joins the trimmed columns" -k --colsep , echo '[{}]' ::: ' a , b '
t "--header without --colsep splits at tabs" -k --header : echo {a} {2} ::: a "$(printf 'x\ty')"

# === perl replacement strings: {= =}, --plus (the tutorial's) ===============================
t "{= perl =}: two extensions off" -k echo '{= s:\.[^.]+$::;s:\.[^.]+$::; =}' ::: foo.tar.gz
t "total_jobs()" -k echo Job {#} of "{= '\$_=total_jobs()' =}" ::: 1 2 3 4 5
t "Q() shell-quotes" -k echo {} shell quoted is "{= '\$_=Q(\$_)' =}" ::: '*/!#$'
t "skip()" -k echo "{= 'if(\$_==3) { skip() }' =}" ::: 1 2 3 4 5
t "@arg" -k echo "{= 'if(\$arg[1]==\$arg[2]) { skip() }' =}" ::: 1 2 3 ::: 1 2 3
t "{=2 perl =} positional" -k echo '{=2 s:\.[^.]+$::;s:\.[^.]+$::; =} {1}' ::: bar ::: foo.tar.gz
t "\$job->seq() and slot()" -j1 echo '{= $_=$job->seq() =}' '{= $_=slot() =}' ::: a b
t "uq(): inserted unquoted" -k echo '{= $_="a b";uq() =}' ::: x
t "{= =} in --tagstring" -k --tagstring '{= $_=uc($_) =}' echo ::: a b
t "{= =} with -X" -j1 -X echo '{= $_.="x" =}' ::: a b c
t "skip() in the joblog" -k --joblog jl echo '{= $_ eq "B" and skip() =}' ::: A B C
t "a perl variable across tasks" -j1 echo '{= $::n++; $_=$::n =}' ::: a b c
t "--plus {} = {+/}/{/}" -k --plus echo {} {+/}/{/} {.}.{+.} {+/}/{/.}.{+.} ::: dir/sub/file.ex1.ex2.ex3
t "--plus {..} {+..} {...} {+...}" -k --plus echo {..}.{+..} {+/}/{/..}.{+..} {...}.{+...} {+/}/{/...}.{+...} ::: dir/sub/file.ex1.ex2.ex3
t "--plus {##}" -k --plus echo Job {#} of {##} ::: 1 2 3 4 5
t "--plus {:-x}" -k --plus echo '{:-myval}' ::: ''
t "--plus {:2} {:2:3}" -k --plus echo '{:2}' '{:2:3}' ::: abcAaAdef
t "--plus {#bc} {#abc}" -k --plus echo '{#bc}' '{#abc}' ::: abcAaAdef
t "--plus {%de} {%def}" -k --plus echo '{%de}' '{%def}' ::: abcAaAdef
t "--plus {/def/ghi}" -k --plus echo '{/def/ghi}' ::: abcAaAdef
t "--plus {^a} {^^a}" -k --plus echo '{^a}' '{^^a}' ::: abcAaAdef
t "--plus {,A} {,,A}" -k --plus echo '{,A}' '{,,A}' ::: AbcAaAdef
t "--plus {##a*} {%%b*} {/#a/Y} {/%c/Z} {//b/W}" -k --plus echo '{##a*}' '{%%b*}' '{/#a/Y}' '{/%c/Z}' '{//b/W}' ::: abcabc
t "--plus {%_demo}" -k --plus echo {%_demo} ::: mycode_demo keep_demo_here
t "--plus {#demo_}" -k --plus echo {#demo_} ::: demo_mycode keep_demo_here
t "--plus {/demo_/}" -k --plus echo {/demo_/} ::: demo_mycode remove_demo_here
t "--plus {choose_k}" -k --plus echo {choose_k} ::: A B C D ::: A B C D
t "--plus 2{2choose_k} 1{1choose_k}" -k --plus echo 2{2choose_k} 1{1choose_k} ::: A B C D ::: A B C D
t "--plus {uniq}" -k --plus echo {uniq} ::: A B C ::: A B C ::: A B C
t "--plus {1uniq}+{2uniq}+{3uniq}" -k --plus echo {1uniq}+{2uniq}+{3uniq} ::: A B C ::: A B C ::: A B C
t "--plus {0#} {0%}" -k --plus echo {0#} ::: a b c d e f g h i j k
t "--plus 'mkdir {..}'" -k --plus 'mkdir -p {..}; echo {..}' ::: x.tar.gz y.tar.gz
t "--plus {host}" -k --plus echo {host} ::: a

t "--rpl a shorthand" -k --rpl '.. s:\.[^.]+$::;s:\.[^.]+$::;' echo '..' ::: foo.tar.gz
t "--rpl {..}, positional too" -k --rpl '{..} s:\.[^.]+$::;s:\.[^.]+$::;' echo '{2..} {1}' ::: bar ::: foo.tar.gz
t "--rpl with a group: {%string}" -k --rpl '{%(.+?)} s/$$1$//;' echo {%.tar.gz}.zip ::: foo.tar.gz
t "--rpl with two groups" -k --rpl '{/(.+?)/(.*?)} s/$$1/$$2/;' echo {/tar.gz/zip} ::: foo.tar.gz
t "--rpl: a lazy group, twice in a word" -k --rpl '{%(.+?)} s/$$1$//;' echo {%.gz}.{%.tar.gz} ::: a.tar.gz
t "--plus {%x} twice in a word" -k --plus echo {%.gz}-{%z} ::: a.gz
t "--parens" -k --parens ,,,, echo ',, s:\.[^.]+$::;s:\.[^.]+$::; ,,' ::: foo.tar.gz
t "--tagstring with a perl counter" -j1 --tagstring '\033[30;3{=$_=++$::color%8=}m' seq {} ::: 1 2 3
t "--rpl {color} in --tagstring" -j1 --rpl '{color} $_="\033[30;3".(++$::color%8)."m"' --tagstring {color} seq {} ::: 1 2 3
t "the digital clock" -k echo {1}'{=3 $_=$_%2?":":" "=}'{2}{3} ::: 0 1 ::: 0 5 ::: 0 1 2
t "log rotate: {= \$_++ =}" -k -j1 echo mv log.{} log.'{= $_++ =}' ::: 3 2 1

# === man parallel_tutorial, in its order ===================================================
t "tut: ::: A B C" echo ::: A B C
t "tut: -a abc-file" -a abc-file echo
tin "tut: stdin" abc-file echo
t "tut: two sources" echo ::: A B C ::: D E F
t "tut: -a twice" -a abc-file -a def-file echo
ts "tut: -a - -a def-file" 'cat abc-file | P -a - -a def-file echo'
ts "tut: :::: - def-file" 'cat abc-file | P echo :::: - def-file'
t "tut: ::: and :::: mixed" echo ::: A B C :::: def-file
t "tut: --link" --link echo ::: A B C ::: D E F
t "tut: --link wraps" --link echo ::: A B C D E ::: F G
t "tut: :::+ links ABC to GHI" echo :::: abc-file :::+ G H I :::: def-file
t "tut: ::::+ links GHI to DEF" echo :::: abc-file ::: G H I ::::+ def-file
t "tut: :::+ too short" echo ::: A B C D E :::+ F G
t "tut: --arg-sep" --arg-sep ,, echo ,, A B C :::: def-file
t "tut: --arg-file-sep" --arg-file-sep // echo ::: A B C // def-file
t "tut: -d _" -d _ echo :::: abc_-file
t "tut: -d '\0'" -d '\0' echo :::: abc0-file
t "tut: -0" -0 echo :::: abc0-file
t "tut: -E stop" -k -E stop echo ::: A B stop C D
ts "tut: --no-run-if-empty" '(echo 1; echo; echo 2) | P -k --no-run-if-empty echo'
t "tut: the arguments are commands" -k ::: ls 'echo foo' pwd
ts "tut: an exported bash function" 'my_func() { echo in my_func $1; }; export -f my_func; P my_func ::: 1 2 3'
t "tut: {} appended" echo ::: A/B.C
t "tut: {}" echo {} ::: A/B.C
t "tut: {.}" echo {.} ::: A/B.C
t "tut: {/}" echo {/} ::: A/B.C
t "tut: {//}" echo {//} ::: A/B.C
t "tut: {/.}" echo {/.} ::: A/B.C
t "tut: {#}" echo {#} ::: A B C
t "tut: {%} with -j 1" -j 1 echo {%} ::: A B C
t "tut: -I ,," -I ,, echo ,, ::: A/B.C
t "tut: {= two extensions =}" echo '{= s:\.[^.]+$::;s:\.[^.]+$::; =}' ::: foo.tar.gz
t "tut: total_jobs(), unquoted {= =}" -k echo Job {#} of {= '$_=total_jobs()' =} ::: 1 2 3 4 5
t "tut: Q()" echo {} shell quoted is {= '$_=Q($_)' =} ::: '*/!#$'
t "tut: skip()" echo {= 'if($_==3) { skip() }' =} ::: 1 2 3 4 5
t "tut: @arg" echo {= 'if($arg[1]==$arg[2]) { skip() }' =} ::: 1 2 3 ::: 1 2 3
t "tut: --parens" --parens ,,,, echo ',, s:\.[^.]+$::;s:\.[^.]+$::; ,,' ::: foo.tar.gz
t "tut: --rpl .." --rpl '.. s:\.[^.]+$::;s:\.[^.]+$::;' echo '..' ::: foo.tar.gz
t "tut: --rpl {..}" --rpl '{..} s:\.[^.]+$::;s:\.[^.]+$::;' echo '{..}' ::: foo.tar.gz
t "tut: --rpl {%(.+?)}" --rpl '{%(.+?)} s/$$1$//;' echo {%.tar.gz}.zip ::: foo.tar.gz
t "tut: --rpl {/(.+?)/(.*?)}" --rpl '{/(.+?)/(.*?)} s/$$1/$$2/;' echo {/tar.gz/zip} ::: foo.tar.gz
t "tut: {1} and {2}" echo {1} and {2} ::: A B ::: C D
t "tut: {1/} {1//} {1/.} {1.}" echo /={1/} //={1//} /.={1/.} .={1.} ::: A/B.C D/E.F
t "tut: negative positions" echo 1={1} 2={2} 3={3} -1={-1} -2={-2} -3={-3} ::: A B ::: C D ::: E F
t "tut: {=2 perl =}" echo '{=2 s:\.[^.]+$::;s:\.[^.]+$::; =} {1}' ::: bar ::: foo.tar.gz
t "tut: --rpl {2..}" --rpl '{..} s:\.[^.]+$::;s:\.[^.]+$::;' echo '{2..} {1}' ::: bar ::: foo.tar.gz
t "tut: --colsep '\t'" --colsep '\t' echo 1={1} 2={2} :::: tsv-file.tsv
t "tut: --header :" --header : echo f1={f1} f2={f2} ::: f1 A B ::: f2 C D
t "tut: --header : --colsep" --header : --colsep '\t' echo f1={f1} f2={f2} :::: tsv-file.tsv
t "tut: --plus {}" --plus echo {} ::: dir/sub/file.ex1.ex2.ex3
t "tut: --plus {+/}/{/}" --plus echo {+/}/{/} ::: dir/sub/file.ex1.ex2.ex3
t "tut: --plus {.}.{+.}" --plus echo {.}.{+.} ::: dir/sub/file.ex1.ex2.ex3
t "tut: --plus {+/}/{/.}.{+.}" --plus echo {+/}/{/.}.{+.} ::: dir/sub/file.ex1.ex2.ex3
t "tut: --plus {..}.{+..}" --plus echo {..}.{+..} ::: dir/sub/file.ex1.ex2.ex3
t "tut: --plus {+/}/{/..}.{+..}" --plus echo {+/}/{/..}.{+..} ::: dir/sub/file.ex1.ex2.ex3
t "tut: --plus {...}.{+...}" --plus echo {...}.{+...} ::: dir/sub/file.ex1.ex2.ex3
t "tut: --plus {+/}/{/...}.{+...}" --plus echo {+/}/{/...}.{+...} ::: dir/sub/file.ex1.ex2.ex3
t "tut: --plus {##}" -k --plus echo Job {#} of {##} ::: 1 2 3 4 5
ts "tut: --plus's bash-like strings" 'myvar=abcAaAdef; P -k --plus echo {:-myval} ::: ""; P -k --plus echo {:2} {:2:3} {#bc} {#abc} {%de} {%def} {/def/ghi} {^a} {^^a} ::: "$myvar"; myvar=AbcAaAdef; P -k --plus echo "{,A}" "{,,A}" ::: "$myvar"'
ts "tut: --xargs: 30000 on 2 lines" 'cat num30000 | P --xargs echo | wc -l'
ts "tut: --xargs -s 10000: 17 lines" 'cat num30000 | P --xargs -s 10000 echo | wc -l'
ts "tut: -m on 4 slots: 5 lines" 'cat num30000 | P --jobs 4 -m echo | wc -l'
t "tut: -m spread over 4 jobs" -k --jobs 4 -m echo ::: 1 2 3 4 5 6 7 8 9 10
t "tut: -m pre-{}-post" --jobs 4 -m echo pre-{}-post ::: A B C D E F G
t "tut: -X pre-{}-post" --jobs 4 -X echo pre-{}-post ::: A B C D E F G
t "tut: -N3" -N3 echo ::: A B C D E F G H
t "tut: -N3 positional" -N3 echo 1={1} 2={2} 3={3} ::: A B C D E F G H
t "tut: -N0" -N0 echo foo ::: 1 2 3
t "tut: perl's @ARGV unquoted prints nothing" perl -e 'print "@ARGV\n"' ::: This wont work
t "tut: -q perl" -q perl -e 'print "@ARGV\n"' ::: This works
t "tut: quoting with \\'" perl -e \''print "@ARGV\n"'\' ::: This works, too
t "tut: a \\-quoted command" perl\ -e\ \'print\ \"@ARGV\\n\"\' ::: This also works
t "tut: --trim r" --trim r echo pre-{}-post ::: ' A '
t "tut: --trim l" --trim l echo pre-{}-post ::: ' A '
t "tut: --trim lr" --trim lr echo pre-{}-post ::: ' A '
t "tut: echo ={}" echo \={} ::: zsh bash ls
t "tut: --tag" --tag echo foo-{} ::: A B C
t "tut: --tagstring" --tagstring {}-bar echo foo-{} ::: A B C
t "tut: --dryrun" --dryrun echo {} ::: A B C
t "tut: --verbose (on stderr)" --verbose echo {} ::: A B C
t "tut: output grouped" -j2 'printf "%s-start\n%s" {} {}; sleep {};printf "%s\n" -middle;echo {}-end' ::: 0.4 0.2 0.1
t "tut: --linebuffer" -j2 --linebuffer 'printf "%s-start\n%s" {} {}; sleep {};printf "%s\n" -middle;echo {}-end' ::: 0.4 0.2 0.1
t "tut: -k" -j2 -k 'printf "%s-start\n%s" {} {}; sleep {};printf "%s\n" -middle;echo {}-end' ::: 0.4 0.2 0.1
t "tut: --results outdir" --results outdir echo ::: A B C
t "tut: --header : --results outdir" --header : --results outdir echo ::: f1 A B ::: f2 C D
t "tut: -N0 -j64 :::: num128" -N0 -j64 true :::: num128
t "tut: --jobs 200%" -N0 --jobs 200% true :::: num8
t "tut: --jobs 0" -N0 --jobs 0 true :::: num8
ts "tut: --jobs FILE" 'echo 50% >my_jobs; P -N0 --jobs my_jobs echo x :::: num8'
t "tut: --use-cpus-instead-of-cores" --use-cpus-instead-of-cores -N0 echo y :::: num8
t "tut: --shuf" --shuf echo ::: 1 2 3 ::: a b c ::: A B C
t "tut: --delay" --delay 0.1 echo Starting {} ::: 1 2 3
t "tut: --timeout" --timeout 1 'sleep {}; echo {}' ::: 0.1 0.2 3 4
t "tut: --eta (on stderr)" --eta echo ::: 1 3 2 2 1 3 3 2 1
t "tut: --progress (on stderr)" --progress echo ::: 1 3 2 2 1 3 3 2 1
t "tut: --bar (on stderr)" --bar echo ::: 1 3 2 2 1 3 3 2 1
t "tut: --joblog exit" --joblog log exit ::: 1 2 3 0
ts "tut: --resume" 'P --joblog log exit ::: 1 2 3 0; P --resume --joblog log exit ::: 1 2 3 0 0 0'
ts "tut: --resume-failed" 'P --joblog log exit ::: 1 2 3 0; P --resume --joblog log exit ::: 1 2 3 0 0 0; P --resume-failed --joblog log exit ::: 1 2 3 0 0 0'
ts "tut: --retry-failed" 'P --joblog log exit ::: 1 2 3 0; P --resume-failed --joblog log exit ::: 1 2 3 0 0 0; P --retry-failed --joblog log'
t "tut: --halt soon,fail=1 (-j1)" -j1 --halt soon,fail=1 echo {}\; exit {} ::: 0 0 1 2 3
t "tut: --halt now,fail=1 (-j1)" -j1 --halt now,fail=1 echo {}\; exit {} ::: 0 0 1 2 3
t "tut: --halt soon,fail=20% (-j1)" -j1 --halt soon,fail=20% echo {}\; exit {} ::: 0 1 2 3 4 5 6 7 8 9
t "tut: --halt now,success=1 (-j1)" -j1 --halt now,success=1 echo {}\; exit {} ::: 1 2 3 0 4 5 6
ts "tut: --retries 3" 'P -k --retries 3 "echo tried {} >>runs; echo completed {}; exit {}" ::: 1 2 0; sort runs; rm runs'
t "tut: --load (a high one: this machine is shared)" --load 1000 echo load is less than {} job per cpu ::: 1
t "tut: --noswap" --noswap echo the system is not swapping ::: now
t "tut: --memfree 1G" --memfree 1G echo will run if more than 1 GB is ::: free
t "tut: --nice 17" --nice 17 echo this is being run with nice -n ::: 17
t "tut: -S : (this machine)" -S : echo running on ::: the_local_machine
# (the tutorial's profile says --timeout 300%: of a median of a few ms, parallel kills tasks a busy
# machine delays, gpupack waits at least 2 s, a documented difference; here in seconds)
ts "tut: --profile nicetimeout" 'mkdir -p .home/.parallel; echo "--nice 17" >.home/.parallel/nicetimeout; echo "--timeout 300" >>.home/.parallel/nicetimeout; HOME=$PWD/.home P -k --profile nicetimeout echo ::: A B C'
ts "tut: --profile dryverbose" 'mkdir -p .home/.parallel; echo "-vv --dry-run" >.home/.parallel/dryverbose; HOME=$PWD/.home P -k --profile dryverbose echo ::: A B C'
ts "tut: --minversion" 'P --minversion 20130722 && echo Your version is at least 20130722.'
t "tut: --number-of-cores" --number-of-cores
t "tut: --max-line-length-allowed" --max-line-length-allowed

# === man parallel_examples (what needs no network, no remote host) ========================
ts "ex: find | gzip --best" 'find ex -name "*.html" | P gzip --best; ls -R ex | sort'
ts "ex: -q0 perl -i -pe" 'find ex -type f -name "*.html" -print0 | P -q0 perl -i -pe "s/FOO BAR/FUBAR/g"; cat ex/a.html'
ts "ex: gzip ::: *.html" 'cd ex && P gzip --best ::: *.html && ls'
ts "ex: mv {} destdir" 'cd ex && ls | grep -E "\.log$" | P mv {} destdir && ls destdir'
ts "ex: -m mv {} destdir" 'cd ex && ls | grep -E "\.log$" | P -m mv {} destdir && ls destdir'
ts "ex: printf %s\\0 | -0 -m mv" 'cd ex && printf "%s\0" *.log | P -0 -m mv {} destdir && ls destdir'
ts "ex: seq -w | rm pict{}.jpg" 'cd ex && touch pict00.jpg pict07.jpg pict42.jpg && seq -w 0 99 | P rm -f pict{}.jpg; ls pict* 2>&1 | wc -l'
ts "ex: perl -pe | -m rm" 'cd ex && touch pict00.jpg pict07.jpg && seq -w 0 99 | perl -pe "s/(.*)/pict\$1.jpg/" | P -m rm -f; ls | grep -c pict'
ts "ex: -X rm pict{}.jpg" 'cd ex && touch pict00.jpg pict99.jpg && seq -w 0 99 | P -X rm -f pict{}.jpg; ls | grep -c pict'
ts "ex: cp {} thumb_{}" 'cd ex && ls *.html | P cp {} thumb_{} && ls thumb_*'
ts "ex: find | {.}_thumb" 'cd ex && find . -name "*.html" | P cp {} {.}_thumb.html && find . -name "*_thumb*" | sort'
ts "ex: zcat {} \">\"{.}" 'cd ex && P zcat {} ">"{.} ::: *.gz && cat p q'
ts "ex: \"zcat {} >{.}\"" 'cd ex && P "zcat {} >{.}" ::: *.gz && cat p q'
ts "ex: echo -n {}\" \"; ls {}|wc -l" 'cd ex && ls | P -k "echo -n {}\" \"; ls {}|wc -l"'
ts "ex: (...) >{}.dir" 'cd ex && ls | P "(echo -n {}\" \"; ls {}|wc -l) >{}.dir" && cat *.dir'
ts "ex: a small script over words" 'cd ex && find . | P -k "a={}; name=\${a##*/};" "upper=\$(echo \"\$name\" | tr \"[:lower:]\" \"[:upper:]\");" "echo \"\$name - \$upper\""'
ts "ex: mv to lower case" 'mkdir lc && cd lc && touch ABC Def && ls | P "mv {} \"\$(echo {} | tr \"[:upper:]\" \"[:lower:]\")\"" && ls'
ts "ex: files that do not exist" 'cat ex/file_list | P "if [ ! -e {} ] ; then echo {}; fi"'
ts "ex: sort into dirs by first letter" 'cd ex && P "mkdir -p {=s/(.).*/\$1/=}; mv {} {=s/(.).*/\$1/=}" ::: *.html && ls -R | sort'
t "ex: missing {1}:{2} files" -k [ -f {1}:{2} ] "||" echo {1}:{2} does not exist ::: 00 01 02 ::: 00 05
ts "ex: doit, doubleit" 'doit() { echo Doing it for $1; echo Done with $1; }; export -f doit; P doit ::: 1 2 3; doubleit() { echo Doing it for $1 $2; echo Done with $1 $2; }; export -f doubleit; P doubleit ::: 1 2 3 ::: a b'
ts "ex: tester" 'tester() { if (eval "$@") >&/dev/null; then perl -e "printf \"\\033[30;102m[ OK ]\\033[0m @ARGV\\n\"" "$@"; else perl -e "printf \"\\033[30;101m[FAIL]\\033[0m @ARGV\\n\"" "$@"; fi; }; export -f tester; P tester exit ::: 1 0 2 0'
ts "ex: log rotate" 'cd ex && for i in "" .1 .2 .3; do echo l$i >log$i; done; seq 3 -1 1 | P -j1 mv log.{} log.'"'"'{= $_++ =}'"'"'; mv log log.1; cat log.1 log.2 log.3 log.4'
ts "ex: zcat | bzip2 && rm" 'cd ex && P "zcat {} | bzip2 >{.}.bz2 && rm {}" ::: *.gz && ls'
ts "ex: find | lame {} -o mydir/{/.}.mp3 (echo)" 'find ex -name "*.html" | P -k echo lame {} -o mydir/{/.}.mp3'
ts "ex: --plus mkdir {..}; tar -C {..}" 'mkdir t1 && echo x >t1/f && tar czf t1.tar.gz t1 && rm -r t1 && P --plus "mkdir {..}; tar -C {..} -xf {}" ::: *.tar.gz && ls -R t1; rm t1.tar.gz'
t "ex: --plus {%_demo}" --plus echo {%_demo} ::: mycode_demo keep_demo_here
t "ex: --plus {#demo_}" --plus echo {#demo_} ::: demo_mycode keep_demo_here
t "ex: --plus {/demo_/}" --plus echo {/demo_/} ::: demo_mycode remove_demo_here
ts "ex: getit with dates" 'getit() { date=$(date -d "today -$1 days" +%Y%m%d); num=$2; echo wget https://www.example.com/path/to/${date}_${num}.jpg; }; export -f getit; P getit ::: $(seq 3) ::: $(seq -w 4)'
ts "ex: -q with a url in a variable" 'base=https://map1a.example.com/wmts.cgi; tile="TILEROW={1}&TILECOL={2}"; url="$base?$tile"; P -k -q echo "$url" -O {1}_{2}.jpg ::: 0 1 ::: 0 1 2'
ts "ex: --tagstring {#} --lb" 'printf "v1\nv2\nv3\n" | P -k --tagstring {#} --lb -j10 echo --playlist-start {#} --playlist-end {#} '"'"'"https://$url"'"'"''
ts "ex: prepend the modified date" 'cd ex && touch -d "2020-01-02 03:04:05" a.log b.log && P mv {} '"'"'{= $a=pQ($_); $b=$_;'"'"' '"'"'$_=qx{date -r "$a" +%FT%T}; chomp; $_="$_ $b" =}'"'"' ::: a.log b.log && ls'
t "ex: the digital clock" -k echo {1}'{=3 $_=$_%2?":":" "=}'{2}{3} ::: 0 1 2 ::: 0 5 ::: 0 1 2 3
ts "ex: aggregating content" 'P --header : echo x{X}y{Y}z{Z} \> x{X}y{Y}z{Z} ::: X 1 2 ::: Y 01 02 03 ::: Z 1 2; P eval '"'"'cat {=s/y01/y*/=} > {=s/y01//=}'"'"' ::: *y01*; cat x1z1 x2z2'
ts "ex: tar xvf | perl | echo" 'mkdir tt && touch tt/a tt/b && tar cf t.tar tt && rm -r tt && tar xvf t.tar | perl -ne "print \$l;\$l=\$_;END{print \$l}" | P echo; rm t.tar'
ts "ex: a while-read loop" 'cat ex/xlist | P "echo step1 {} scale {.}.jpg ; echo step2 {.}" | sort'
ts "ex: a loop body as a function" 'doit() { x=$1; echo doing $x; }; export -f doit; cat ex/xlist | P doit'
t "ex: nested for-loops from files" echo do_something {1} {2} :::: ex/xlist ex/ylist
ts "ex: colours by sizes | sort" 'P echo {1} {2} ::: red green blue ::: S M L XL XXL | sort'
ts "ex: --tag diff | sort -nk3" 'cd ex && P --tag "diff {1} {2} | wc -l" ::: a.html b.html ::: a.html b.html | sort -nk3'
t "ex: --header : {colour} {size}" --header : echo {colour} {size} ::: colour red green blue ::: size S M L XL XXL
ts "ex: addressbook.tsv --colsep --header" 'cat ex/addressbook.tsv | P --colsep "\t" --header : echo {Name} {E-mail}'
t "ex: {choose_k} of three" --plus echo {choose_k} ::: A B C D ::: A B C D ::: A B C D
t "ex: {uniq}" --plus echo {uniq} ::: A B C ::: A B C ::: A B C
ts "ex: ::::+ from a to b" 'P echo {1} - {2} ::::+ <(head -n -1 ex/in.txt) <(tail -n +2 ex/in.txt)'
ts "ex: :::+ from an array" 'a=(aardvark babble cab dab each); P echo {1} - {2} ::: "${a[@]::${#a[@]}-1}" :::+ "${a[@]:1}"'
ts "ex: --results diffcount" 'cd ex && P --results ../diffcount "diff -U 0 {1} {2} | tail -n +3 |grep -v '"'"'^@'"'"'|wc -l" ::: a.html b.html ::: a.html b.html'
ts "ex: touch pict{}.jpg, and -X" 'cd ex && seq -w 0 20 | P touch pict{}.jpg && seq -w 21 40 | P -X touch pict{}.jpg && ls | grep -c pict'
ts "ex: \${ARR[@]} unquoted" 'ARR=("My brother'"'"'s 12\" records are worth <\$\$\$>"'"'"'!'"'"' Foo Bar); P -k echo ::: ${ARR[@]}'
ts "ex: \"\${ARR[@]}\"" 'ARR=("My brother'"'"'s 12\" records are worth <\$\$\$>"'"'"'!'"'"' Foo Bar); P -k echo ::: "${ARR[@]}"'
ts "ex: -q echo \"\$VAR\"" 'VAR="My brother'"'"'s 12\" records are worth <\$\$\$>"; P -q echo "$VAR" ::: "!"; export VAR; P echo '"'"'"$VAR"'"'"' ::: "!"'
ts "ex: \"'\$VAR'\"" 'VAR="My 12\" records are worth <\$\$\$>"; P echo "'"'"'$VAR'"'"'" ::: "!"'
ts "ex: myfunc and \$VAR" 'VAR="My brother'"'"'s 12\" records are worth <\$\$\$>"; export VAR; myfunc() { echo "$VAR" "$1"; }; export -f myfunc; P myfunc ::: "!"'
ts "ex: -k append_string" 'cat ex/xlist | P -k echo {} append_string'
ts "ex: -k -j150% -n 1000 -m grep" 'cd ex && find . -type f | sort | P -k -j150% -n 1000 -m grep -H -n FOO {}'
t "ex: --results my.csv" -j1 --results my.csv seq ::: 10 20 30
ts "ex: -n0 runs the same 10 times" 'seq 10 | P -n0 echo my_command my_args'
ts "ex: commands from stdin" 'P -j 100 <ex/jobs_to_run'
t "ex: sort by colour (nested)" -k echo {1} {2} ::: red green ::: S M

# === man parallel's examples (what needs no network, no remote host, no --pipe) =============
ts "man: {} + 1 is {= \$_++ =}" 'seq 10 | P -k echo {} + 1 is {= '"'"'$_++'"'"' =}'
ts "man: job {#} of total_jobs()" 'seq 50 | P -k echo job {#} of {= '"'"'$_=total_jobs()'"'"' =}'
ts "man: the equivalent forms of :::" '(echo file1; echo file2) | P echo gzip; P echo gzip ::: file1 file2; P echo gzip {} ::: file1 file2; P --arg-sep ,, echo gzip {} ,, file1 file2; P --arg-sep ,, echo gzip ,, file1 file2; P ::: "echo gzip file1" "echo gzip file2"'
ts "man: :::, :::: and -a mixed" 'P -k echo {1} {2} {3} ::: 6 7 ::: 4 5 ::: 1 2 3; P -k echo {1} {2} {3} :::: <(seq 6 7) <(seq 4 5) :::: <(seq 1 3); P -k -a <(seq 6 7) echo {1} {2} {3} :::: <(seq 4 5) :::: <(seq 1 3); P -k -a <(seq 6 7) -a <(seq 4 5) echo {1} {2} {3} ::: 1 2 3; seq 6 7 | P -k -a - -a <(seq 4 5) echo {1} {2} {3} ::: 1 2 3; seq 4 5 | P -k echo {1} {2} {3} :::: <(seq 6 7) - ::: 1 2 3'
t "man: :::+ twice" echo ::: a b c :::+ 1 2 3 ::: X Y :::+ 11 22
t "man: --colsep '-' with two sources" echo {4} {3} {2} {1} --colsep '-' ::: A-B C-D ::: e-f g-h
t "man: --colsep - two sources (as written)" --colsep '-' echo {4} {3} {2} {1} ::: A-B C-D ::: e-f g-h
ts "man: --csv needs Text::CSV here too" 'echo "\"1 big, 2 small\",\"2\"\"x4\"\" plank\",12.34" | P --csv echo {1} of {2} at {3}; echo rc=$?'
ts "man: --colsep , splits the quoted field" 'echo "\"1 big, 2 small\",\"2\"\"x4\"\" plank\",12.34" | P --colsep "," echo {1} of {2} at {3}'
t "man: --filter" -k --filter '{1} < {2}+1' echo ::: 1 2 3 ::: 1 2 3
ts "man: -j0 and \$foo++" 'seq 20 | P -j1 echo '"'"'{= $_ = $foo++; =}'"'"' | head -n 5'
t "man: -j4 sleep; echo" -j4 sleep {}\; echo {} ::: 0.2 0.1 0.4 0.3
t "man: -j4 -k sleep; echo" -j4 -k sleep {}\; echo {} ::: 0.2 0.1 0.4 0.3
t "man: -j0 echo; sleep; echo" -j0 'echo {};sleep {};echo {}' ::: 0.1 0.3 0.2 0.4
t "man: -j0 --lb" -j0 --lb 'echo {};sleep {};echo {}' ::: 0.1 0.3 0.2 0.4
t "man: -j0 -k --lb" -j0 -k --lb 'echo {};sleep {};echo {}' ::: 0.1 0.3 0.2 0.4
t "man: {1} {2} crossed" echo {1} {2} ::: 1 2 3 ::: a b c
t "man: --link {1} {2}" --link echo {1} {2} ::: 1 2 3 ::: a b c
t "man: --link recycles" --link echo {1} {2} {3} ::: 1 2 ::: I II III ::: a b c d e f g
ts "man: --minversion && --halt now,done=50%" 'P --minversion 20170422 && echo halt done=50% supported from version 20170422 && P -j1 --halt now,done=50% echo ::: $(seq 100)'
ts "man: -N7 from /etc/passwd" 'head -n 3 /etc/passwd | tr ":" "\n" | P -k -N7 echo chown {1} {6}'
ts "man: --process-slot-var=name" 'seq 10 | P -j1 --process-slot-var=name echo '"'"'$name'"'"' {}'
t "man: --parens ,,,," --parens ,,,, echo foo is ,,s/I/O/g,, ::: FII
t "man: --header : --results foo" --header : --results foo echo {a} {b} ::: a I II ::: b III IIII
t "man: --results foo" --results foo echo {1} {2} ::: I II ::: III IIII
t "man: --results my_{}" --results my_{} echo ::: foo bar baz
t "man: --results my_{}/" --results my_{}/ echo ::: foo bar baz
ts "man: --resume --joblog -j10" 'P --joblog log -j10 echo ::: 1 2 3; P --resume --joblog log -j10 echo ::: 1 2 3 4 5'
ts "man: --resume-failed -j10" 'P --joblog log -j10 exit ::: 0 1 0; P --resume-failed --joblog log -j10 exit ::: 0 0 0 0'
ts "man: --retry-failed ignores the command" 'P --joblog log -j10 exit ::: 0 1 2; P --retry-failed --joblog log -j10 this part is ignored'
t "man: --rpl {%(.*?)}" --rpl '{%(.*?)} s/$$1//' echo {%.tar.gz} ::: my.tar.gz
t "man: --rpl {:%(.+?)}" --rpl '{:%(.+?)} s:$$1(\.[^/]+)*$::' echo {:%_file} ::: my_file.tar.gz
t "man: -n3 --rpl {/:%(.*?)}" -k -n3 --rpl '{/:%(.*?)} s:.*/(.*)$$1(\.[^/]+)*$:$1:' echo job {#}: {2} {2.tar.gz} {/:%_1} ::: /tmp/file_1.tar.gz /tmp/file_2.c /tmp/file_3.txt
t "man: --rpl {(.*?)/(.*?)}" --rpl '{(.*?)/(.*?)} $_="$$2$_$$1"' echo {=/=}.html ::: foo
ts "man: --shell-quote twice" 'echo "a b" | P --shell-quote | P --shell-quote'
t "man: --shuf --halt soon,done=1% (count)" -j1 --shuf --halt soon,done=1% true ::: $(seq 10) ::: $(seq 10)
ts "man: -N2 \$PARALLEL_SEQ" 'seq 10 | P -k -N2 echo seq:\$PARALLEL_SEQ arg1:{1} arg2:{2}'
ts "man: \$VAR of the calling shell" 'VAR="two  spaces"; echo test | P echo {} $VAR'
ts "man: \$VAR quoted" 'VAR="two  spaces"; echo test | P echo {} \'"'"'"$VAR"\'"'"''
ts "man: VAR set in the line" 'echo test | P VAR=this_is_set_after_starting \; echo {} \$VAR'
ts "man: VAR with spaces" 'echo test | P VAR='"'"'"two  spaces  between	each  word"'"'"' echo {} \'"'"'"$VAR"\'"'"''
ts "man: \$\$ of each shell differs" 'seq 3 | P echo \$\$ | sort -u | wc -l'
ts "man: \\\\\\\$VAR" 'echo test | P echo {} \\\$VAR'
ts "man: -q echo {} \$VAR" 'echo test | P -q echo {} \$VAR'
ts "man: perl -ne with \\ quoting" 'cd ex && ls | P perl -ne '"'"'/^\\S+\\s+\\S+\$/\ and\ print\ \$ARGV,\"\\n\"'"'"''
ts "man: perl -ne with \\' quoting" 'cd ex && ls | P perl -ne \'"'"'/^\S+\s+\S+$/ and print $ARGV,"\n"'"'"'\'
ts "man: -q perl -ne" 'cd ex && ls | P -q perl -ne '"'"'/^\S+\s+\S+$/ and print $ARGV,"\n"'"'"''
ts "man: -q \"zcat {} >{.}\" fails" 'cd ex && ls *.gz | P -q "zcat {} >{.}"; echo rc=$?'
ts "man: -q bash -c wc -c <(echo {})" 'cd ex && ls | P -k -q bash -c '"'"'wc -c <(echo {})'"'"''
ts "man: -N2 with a shell" 'seq 10 | P -k -N2 '"'"'echo {1} {2}'"'"''
ts "man: -j1 -k -v ls" 'cd ex && printf "a.html\nsub\n" | P -j1 -k -v ls'
ts "man: -vkd, echo a{}b forms" 'echo 1,2,3 | P -vkd, "echo '"'"'a{}b'"'"'"; echo 1,2,3 | P -vkd, echo a{}b; echo 1,2,3 | P -vkd, "echo '"'"'a'"'"'{}'"'"'b'"'"'"; echo 1,2,3 | P -vkd, "echo '"'"'a'"'"'"{}"'"'"'b'"'"'"'
ts "man: -J nice_profile" 'mkdir -p .home/.parallel && echo "--nice 17" >.home/.parallel/nice_profile && HOME=$PWD/.home P -k -J nice_profile echo bzip2 -9 ::: a b'
ts "man: -J pre_perl" 'mkdir -p .home/.parallel && echo "-vv --pipe perl -e '"'"'print \"pre\"'"'"'" >/dev/null; mkdir -p .home/.parallel && echo "-k" >.home/.parallel/pre_perl && HOME=$PWD/.home P -J pre_perl echo ::: x y'

# === --pipe: the tutorial's section, the examples' and the man page's =====================
ts "tut: --pipe wc" 'cat num300000 | P -k --pipe wc'
ts "tut: --pipe --block 200k" 'cat num300000 | P -k --pipe --block 200k wc'
ts "tut: --pipe -N14000" 'cat num300000 | P -k --pipe -N140000 wc'
ts "tut: --pipe -L75" 'cat num300000 | P -k --pipe -L75 wc'
ts "tut: fixed length records" 'cat fixedlen | P -k --pipe --header .{4} --block 3 --recend "" "echo start; cat; echo"'
ts "tut: --recend ', '" 'echo /foo, bar/, /baz, qux/, | P -kN1 --recend ", " --pipe echo JOB{#}\;cat\;echo END'
ts "tut: --recstart /" 'echo /foo, bar/, /baz, qux/, | P -kN1 --recstart / --pipe echo JOB{#}\;cat\;echo END'
ts "tut: --recend and --recstart" 'echo /foo, bar/, /baz, qux/, | P -kN1 --recend ", " --recstart / --pipe echo JOB{#}\;cat\;echo END'
ts "tut: --regexp --recend ,_+" 'echo foo,bar,_baz,__qux, | P -kN1 --regexp --recend ,_+ --pipe echo JOB{#}\;cat\;echo END'
ts "tut: --rrs" 'echo foo,bar,_baz,__qux, | P -kN1 --rrs --regexp --recend ,_+ --pipe echo JOB{#}\;cat\;echo END'
ts "tut: --header regex --pipe -N3" 'cat num_%header | P -k --header "(%.*\n)*" --pipe -N3 echo JOB{#}\;cat'
ts "tut: --header 2 --pipe -N3" 'cat num_%header | P -k --header 2 --pipe -N3 echo JOB{#}\;cat'
t "tut: --pipepart" -k --pipepart -a num300000 --block 300k wc
ts "tut: --pipe -j4 (each task its blocks)" 'cat num300000 | P --pipe -j4 --block 100k wc | awk "{ s += \$1 } END { print s }"'
ts "ex: --pipe --recend '' -k gzip" 'cat num300000 | P --pipe --recend "" -k gzip -9 | gzip -dc | wc -l'
ts "ex: --pipe --files sort | sort -m" 'shuf -n 20000 --random-source=num300000 num300000 >big; cat big | P --pipe --block 20k --files sort | P -Xj1 sort -m {} "\;" rm {} | md5sum'
ts "ex: mygenerator | --pipe --block sh" 'seq 3000 | perl -pe "print \"echo This is fast job number \"" | P --pipe --block 10k sh | sort | md5sum'
ts "ex: grouping lines by a customer" 'printf "1 a 53\n2 b 65\n3 b 82\n4 c 96\n5 c 67\n6 c 13\n" | perl -ape '"'"'$F[1] ne $l and print "SEPARATOR"; $l = $F[1]'"'"' | P -k --recend SEPARATOR --rrs --pipe -N1 wc'
ts "ex: FASTA records" 'printf ">Sequence name1\nACGT\nTTGA\n>Sequence name2\nGGCC\n" | P -k --pipe -N1 --recstart ">" --rrs '"'"'read a; echo Name: "$a"; echo $(tr -d "\n")'"'"''
ts "man: --pipe --tee -v wc {}" 'seq 1000 | P -k --pipe --tee -v wc {} ::: -w -l -c'
ts "man: --pipe --tee --tag" 'seq 1000 | P -k --pipe --tee --tag "grep {} | wc -l" ::: 3 5 7'
ts "--tee without {}: the values are not appended" 'seq 3 | P -k --tee --pipe wc -l ::: A B'
t "-l 2: Getopt's optional value in the next word" -k -l 2 echo ::: a b c
t "--max-lines 2" -k --max-lines 2 echo ::: a b c
t "-e C: the eof string in the next word" -k -e C echo ::: A B C D
t "-i WORD: the replace string in the next word" -k -i echo x{} ::: a
t "-i -: a dash is a value" -k -i - echo x- ::: a
t "-i before an option: -i alone" -k -i -k echo x{} ::: a
ts "man: --pipe-part --block -10" 'P --pipe-part -a num300000 --block -10 -j5 wc | awk "{ s += \$1 } END { print s, NR >= 10 }"'
ts "man: --pipe -N2 the_program" 'seq 6 | P -k --pipe -N2 "echo \$(wc -l) lines"'

# === issue 43: documented recipes that once ran differently (run-parallel-docs.t has more) ===
t "man -N: -N0 runs a perl expression on parallel's no-value" -k -N0 echo '{= $_="x" =}' '{= $_=$arg[1] =}' {#} ::: a b
ts "ex: ISO 8601 dirs, with seq() for the date: -N0 --results '{= =}/'" 'seq 2 | P -N0 -j1 --results "{= \$_=\"d\".seq() =}/" echo hi'
t "man -X: -N0 -X fills lines, inserting nothing" -k -N0 -X echo x ::: a b c d e
ts "man --cat: --cat alone means --pipe" 'seq 5 | P -k --cat "wc -l < {}"'
ts "man --fifo: --fifo alone means --pipe" 'seq 5 | P -k --fifo "wc -c < {}"'
ts "man --results: --pipe --results DIR (the last task's files)" 'seq 5 | P -j1 --pipe -N2 --results res cat'
ts "man --results: --pipe --cat --results DIR" 'seq 5 | P -j1 --pipe -N2 --cat --results res cat {}'
t "man --colsep: a (group) is a column, as perl's split" -k --colsep '(,)' echo '{1}/{2}/{3}' ::: 'x,y' 'z'
t "man --filter: a bareword value is a perl error: false" -k --filter '{} =~ /a/' echo ::: a b ca
t "man --filter: a quoted value" -k --filter '"{}" =~ /a/' echo ::: a b ca
ts "man --wd: --wd {} made and entered" 'P -k --wd {} "basename \$(pwd)" ::: wa wb; ls -d wa wb'
ts "man -n: unit prefixes, -n 1k" 'seq 2500 | P -k -n 1k echo | wc -l'
ts "man --block: 1k+1k" 'seq 3000 | P -k --pipe --block 1k+1k wc -c'
t "man --header: {=name perl =}" -k --header : echo '{=foo $_.="x" =}' ::: foo a b
t "man --csv: a quoted comma" -k --csv echo '{2}' ::: 'a,"b,c"' 'x,"y"'
t "man -u: --tag changes nothing" -j1 -u --tag echo ::: a b
t "man --compress: the output as without it" -k --compress-program cat --decompress-program cat echo ::: a b
# man parallel: --round-robin, --bin, --group-by, --ctag, --color; man parallel_tutorial:
# "--round-robin"; man parallel_examples: "Grepping n lines for m regular expressions"
tin "man --round-robin: -j3 -N2, blocks in turn" num8 -k --pipe --round-robin -j3 -N2 'echo job {#}; cat'
tin "man --round-robin: fewer blocks than slots" num8 -k --pipe --round-robin -j4 -N5 'echo job {#}; cat'
tin "tutorial --round-robin: wc, a task a slot" num300000 --pipe -j4 --round-robin wc
tin "man --bin 1: value % slots" num8 -k --pipe --bin 1 -j3 'echo job {#}; cat'
tin "man --bin '1 \$_%=2'" num8 -k --pipe --bin '1 $_%=2' -j3 'echo job {#}; cat'
tin "man --bin NAME --colsep: the header line is no task's" csv -k --pipe --header : --colsep , --bin a -j2 cat
ts "man --group-by 1 -kN1 wc" 'printf "123,1\n123,2\n12-3,1\n221,3\n221,1\n2/21,5\n" | P --pipe --colsep , --group-by 1 -kN1 wc'
ts "man --group-by 'UserID s/\\D//g' --header :" 'printf "UserID,C\n123,1\n123,2\n12-3,1\n221,3\n" | P --pipe --colsep , --header : --group-by "UserID s/\\D//g" -kN1 cat'
tin "man --group-by: blocks of whole groups" num128 -k --pipe --group-by '$_ = int($_/10)' --block 50 'wc -l'
t "man --pipe-part --group-by 1" -k --pipe-part -a num128 --group-by '1 $_ = int($_/7)' --block 60 'wc -l'
ts "examples: grep -f - with --round-robin -L" 'printf "a\nb\nq\n" | P --pipe -L1 --round-robin --compress grep -f - -n ex/in.txt | sort -un | perl -pe "s/^\\d+://"'
t "man --ctag: parallel's colours" -k --ctag echo ::: a b c
t "man --ctagstring" -k --ctagstring '<{}>' echo ::: a b
t "man --color" -k --color echo ::: a b

# === refused, with the alternative =========================================================
refused "-S host" -S server echo ::: a
refused "--sshlogin" --sshlogin server echo ::: a
refused "--retries 0 (parallel: forever)" --retries 0 false ::: a
refused "--delay auto" --delay 1auto echo ::: a
refused "--delay -1" --delay -1 echo ::: a

# === documented differences ===============================================================
G2="$TOPO/h200-141gb-x2.topo"
# (the two tasks wait for each other: one at a time, the first would wait its 20 s out and fail)
doc "-j is per device: -j 1 on two GPUs runs two at once" \
	'[ "$($GPUPACK --sim "$G2" run --share timeslice -j 1 --json "touch $T/w.{}; timeout 20 sh -c \"until [ -e $T/w.a ] && [ -e $T/w.b ]; do sleep 0.05; done\"" ::: a b | jq -r "([.devices[].tasks] | add), .failed" | paste -sd " ")" = "2 0" ]'
doc "{gpu} and {slot} are gpupack's (parallel leaves {gpu} as it is)" \
	'[ "$($GPUPACK --sim "$SIM" run --share timeslice -j1 echo {gpu} ::: a)" = GPU-0935e153-333f-178e-fcc2-6348e796093e ]'
doc "no default -j from the CPU count: -j auto, the farm chooses per device (from 2 under timeslice)" \
	'[ "$($GPUPACK --sim "$SIM" run --share timeslice --json true ::: a | jq -r ".devices[0].jobs, .devices[0].auto.start" | paste -sd " ")" = "auto 2" ]'

run_all
for ((i = 0; i < N_; i++)); do compare "$i"; done
diag "parallel-diff: identical $P_ ($REC_ as GNU parallel's recorded answer, $LIVE_ run live), documented-different $D_, refused $R_${FAILED:+; different:$FAILED}"
