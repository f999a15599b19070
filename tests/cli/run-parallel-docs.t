#!/bin/sh
# shellcheck disable=SC1083,SC2016 # replacement strings and perl's $_ are literal on purpose
# run-parallel-docs.t: the forms of GNU parallel's own documentation (man parallel,
# parallel_tutorial, parallel_examples; named by section) that gpupack once ran
# differently without a word (issue 43), side by side with parallel where parallel
# itself can run them here, and the few places where gpupack deliberately refuses.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

cd "$T" || exit 1
if ! command -v parallel >/dev/null 2>&1 || ! parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
	echo "1..0 # SKIP GNU parallel is not installed (.ci/run installs it)"
	trap - EXIT
	rm -rf "$T"
	exit 0
fi
export HOME="$T/home"
mkdir -p "$HOME/.parallel" && touch "$HOME/.parallel/will-cite"
unset PARALLEL PARALLEL_SHELL XDG_CONFIG_HOME PARALLEL_HOME
export LC_ALL=C

gp() {
	$GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"
}
# both NAME ARGS...: parallel and gpupack given ARGS (stdin from $T/stdin when it exists):
# the same stdout (sorted, as the tasks run at once) and exit status
both() {
	name=$1
	shift
	[ -f "$T/stdin" ] || : >"$T/stdin"
	parallel "$@" <"$T/stdin" >"$T/both.out" 2>/dev/null
	want="exit $? $(LC_ALL=C sort "$T/both.out")"
	gp "$@" <"$T/stdin" >"$T/both.out" 2>/dev/null
	got="exit $? $(LC_ALL=C sort "$T/both.out")"
	is "$got" "$want" "$name"
}
# tree DIR: the files under DIR and their contents (but gpupack's own usage.json: doc/run.md's
# documented differences)
tree() {
	(cd "$1" && find . -type f ! -name usage.json | LC_ALL=C sort | while read -r f; do printf '== %s\n' "$f"; cat "$f"; echo; done)
}

# --- 1. -N0 and perl expressions (man parallel: -N; parallel_examples: "Save output in ISO8601 dirs")
both "-N0: a perl expression is evaluated, as parallel's" -N0 -k echo '{= $_="x" =}' {#} ::: a b
both "-N0: \$arg[1] and \$_ are parallel's no-value: the word goes" -N0 -k echo '{= $_=$arg[1] =}' {#} ::: a b
both "-N0: @arg has one entry per source" -N0 -k echo '{= $_=scalar(@arg) =}' ::: a b ::: c
both "-N0: --tagstring's perl expression" -N0 -k --tagstring '{= $_="T".seq() =}' echo hi ::: a b
both "-N0: seq() in a perl expression" -N0 -k echo '{= $_=seq() =}' ::: a b
mkdir p g
(cd p && seq 2 | parallel -N0 -j1 --results '{= $_="d".seq()."x"; s/x$// =}/' echo hi >/dev/null 2>&1)
(cd g && seq 2 | gp -N0 -j1 --results '{= $_="d".seq()."x"; s/x$// =}/' echo hi >/dev/null 2>&1)
is "$(tree g)" "$(tree p)" "-N0 --results '{= perl =}/': a directory per task, as parallel's"
mkdir iso
(cd iso && seq 2 | gp -N0 -j1 --results '{= $_=`date -Isec`; chomp=}/' echo hi >/dev/null 2>&1)
# the two tasks may run in one second (one directory) or two (a loaded machine): each is named by the date
iso_dirs=$(cd iso && find . -name stdout | sed 's|/stdout$||' | LC_ALL=C sort)
is "$(printf '%s\n' "$iso_dirs" | grep -Evc '^\./[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}')" 0 \
	"the ISO 8601 recipe: results in a directory named by the date"
like "$(printf '%s\n' "$iso_dirs" | wc -l)" '^[12]$' "the ISO 8601 recipe: a directory a second the tasks ran in"

# --results never writes at the filesystem's root (parallel does, from such a template)
mkdir res && cd res || exit 1
run gp --results '{= $_="" =}/' echo ::: a
is "$rc" 255 "--results resolving to / is refused (255)"
one_line "$err" "--results resolving to /: one line"
like "$err" "filesystem's root" "--results resolving to /: says why"
is "$(ls -A)" "" "--results resolving to /: nothing was written"
run gp --results '{= $_="" =}' echo ::: a
is "$rc:$(ls -A)" "255:" "--results resolving to an empty name is refused, nothing written"
one_line "$err" "--results resolving empty: one line"
run gp --results '{}' echo ::: /gpupack-test-x
is "$rc" 255 "--results {} with a value at the root is refused"
run gp --results '{}/' echo ::: ../../../../../../../../../../../../..
is "$rc" 255 "--results {}/ climbing to the root with .. is refused"
run gp --dry-run --results '{= $_="" =}/' echo ::: a
is "$rc:$(ls -A)" "255:" "--dry-run --results resolving to /: refused too"
run gp -N0 --results '{= $_="" =}/' echo ::: a
is "$rc" 255 "-N0 --results '{= =}/' resolving to /: refused"
run gp --results 'sub/{}' echo ::: a
is "$rc:$(cat sub/a)" "0:a" "--results sub/{}: written where it says"
cd "$T" || exit 1


# --- 2. --cat and --fifo imply --pipe (man parallel: --cat, --fifo)
seq 5 >"$T/stdin"
both "--cat without --pipe: the block is the file {}" -k --cat 'wc -l < {}'
both "--fifo without --pipe: the same" -k --fifo 'wc -c < {}'
both "--fifo: cat {}" -k -N2 --fifo cat {}
both "--fifo with --cat: an error, as parallel's" --fifo --cat cat {}
rm -f "$T/stdin"

# --- 4. -N0 with -X, -m, --xargs (man parallel: -N, -X): records fill a line, none inserted
both "-N0 -X: the values fill a line, spread over the slots" -k -N0 -X echo x ::: a b c d e
both "-N0 -X -j1: one task" -k -j1 -N0 -X echo x ::: a b c
both "-N0 -m: as -X" -k -N0 -m echo x ::: a b c d e
both "-N0 --xargs: one task" -k -N0 --xargs echo x ::: a b c
both "-N0 -X: a perl expression once per value" -k -N0 -X echo '{=$_="y"=}' ::: a b c d e
both "-N0 -X --dry-run: the words as parallel's" -k -N0 -X --dry-run echo x {} y ::: a b c

# --- 3. --pipe --results: parallel's names, the same in every run (man parallel: --results, --cat)
for side in p g; do
	mkdir "pr.$side" && cd "pr.$side" || exit 1
	if [ $side = p ]; then P=parallel; else P=gp; fi
	seq 5 | $P -j1 --pipe -N2 --results res cat >/dev/null 2>&1
	seq 5 | $P -j1 --pipe -N2 --cat --results rescat cat {} >/dev/null 2>&1
	seq 3 | $P -j1 --pipe -N2 --cat --results res.csv --joblog jl cat {} >/dev/null 2>&1
	cut -d, -f1,7-10 res.csv | tr '\n' ' ' >csv.cols && rm res.csv
	cut -f1,7-9 jl >jl.cols && rm -f jl jl.gpupack
	cd "$T" || exit 1
done
is "$(tree pr.g)" "$(tree pr.p)" "--pipe --results: DIR/stdout (--cat: DIR/1/\$PARALLEL_TMP/), as parallel's"
seq 3 >"$T/stdin"
both "--cat: {} is \$PARALLEL_TMP in the line (-v), as parallel's" -k -N2 --cat -v 'cat < {} | wc -l'
both "--cat --tag: the tag is \$PARALLEL_TMP" -k -N2 --cat --tag 'wc -l < {}'
rm -f "$T/stdin"

# --- 5. --colsep's (groups) are columns too (perl's split; man parallel: --colsep)
both "--colsep '(,)': the separator is a column" -k --colsep '(,)' echo '{1}/{2}/{3}/{4}' ::: 'x,y;z' 'p;q'
both "--colsep '(,)|;': a group that took no part is empty" -k --colsep '(,)|;' echo '{1}/{2}/{3}/{4}' ::: 'x,y;z' 'p;q'
both "--colsep '((,)|(;))': nested groups in order" -k --colsep '((,)|(;))' echo '{1}/{2}/{3}/{4}/{5}' ::: 'x,y'

# --- 6. --filter: values bare, evaluated under strict as parallel's (man parallel: --filter)
both "--filter '{1} < {2}+1' (the man page's example)" -k --filter '{1} < {2}+1' echo ::: 1 2 3 ::: 1 2 3
both "--filter '{} =~ /a/': a bareword is an error, so false" -k --filter '{} =~ /a/' echo ::: a b ca
both "--filter '\"{}\" =~ /a/'" -k --filter '"{}" =~ /a/' echo ::: a b ca
both "--filter with a space in the value: a syntax error is false" -k --filter '{} eq "b c"' echo ::: 'b c' d
both "--filter: an undeclared variable (strict) is false" -k --filter '$x={}; $x > 1' echo ::: 1 2 3
both "--filter twice: both must hold" -k --filter '"{}" ne "b"' --filter '"{}" ne "c"' echo ::: a b c d

# --- 8. --wd: replacement strings expanded, the directory made (man parallel: --wd)
for side in p g; do
	mkdir "wd.$side" && cd "wd.$side" || exit 1
	if [ $side = p ]; then P=parallel; else P=gp; fi
	mkdir a b
	$P -k --wd {} 'pwd | sed "s|.*/wd\.[pg]/||"' ::: a b >out 2>&1
	$P -k --wd nosuch/x 'pwd | sed "s|.*/wd\.[pg]/||"' ::: 1 >>out 2>&1
	$P -k --wd '{= $_="q".$_ =}' 'basename $(pwd); echo {}' ::: 1 >>out 2>&1
	touch f
	$P --wd f pwd ::: 1 >/dev/null 2>&1
	echo "a file: $?" >>out
	cd "$T" || exit 1
done
is "$(tree wd.g)" "$(tree wd.p)" "--wd {}, --wd nosuch/x, --wd '{= =}', --wd FILE: as parallel's"
run gp --wd /proc/nosuch/x pwd ::: 1
one_line "$err" "--wd that cannot be made: one line"

# --- 9. --shebang: the #! line's one word split (man parallel: --shebang)
printf '#!%s --shebang -k -r echo\n\na b\nc\n\n' "$(command -v parallel)" >sb.p
printf '#!%s --shebang -k -r echo\n\na b\nc\n\n' "$GPUPACK" >sb.g
printf '#!%s run --shebang -k -r echo\n\na b\nc\n\n' "$GPUPACK" >sb.g2
chmod +x sb.p sb.g sb.g2
want=$(./sb.p 2>&1; echo "exit $?")
is "$(GPUPACK_SIM="$TOPO/h100-80gb.topo" PARALLEL="--share timeslice" ./sb.g 2>&1; echo "exit $?")" "$want" \
	"#!gpupack --shebang -k -r echo: the script's lines are the inputs, as parallel's"
is "$(GPUPACK_SIM="$TOPO/h100-80gb.topo" PARALLEL="--share timeslice" ./sb.g2 2>&1; echo "exit $?")" "$want" \
	"#!gpupack run --shebang ...: the same"
printf '#!%s --shebang-wrap /usr/bin/python3\nprint(1)\n' "$GPUPACK" >sw.g && chmod +x sw.g
run env GPUPACK_SIM="$TOPO/h100-80gb.topo" ./sw.g
is "$rc" 255 "--shebang-wrap: refused"
one_line "$err" "--shebang-wrap: one line naming the alternative"

# --- 10. parallel's --shard COLUMN meets gpupack's --shard K/N: the message names both
run gp --pipe --shard 1 -j4 wc -l
is "$rc" 255 "--shard 1 (parallel's column form): refused"
one_line "$err" "--shard 1: one line"
like "$err" "K/N.*parallel's --shard COLUMN" "--shard 1: the message names both forms"

# --- 12. unit prefixes and their sums (man parallel: --block, -n, -s: "multiply_binary_prefix")
seq 3000 >"$T/stdin"
both "-n 1k" -k -n 1k echo
both "-s 1k -X" -k -j1 -X -s 1k echo
both "--block 1k+1k" -k --pipe --block 1k+1k wc -c
both "--block 2*1K" -k --pipe --block '2*1K' wc -c
seq 12 >"$T/stdin"
both "-N 1+1" -k -N 1+1 echo
both "-L 0.002k" -k -L 0.002k echo
rm -f "$T/stdin"
run gp -n 1q echo ::: a
is "$rc" 255 "-n 1q: refused"
one_line "$err" "-n 1q: one line"

# --- 12b. --header's names in perl expressions (man parallel: --header, {=N perl =})
both "--header : '{=name perl =}'" -k --header : echo '{=foo $_.="x" =}' {bar} ::: foo a b ::: bar c
printf 'n1,n2\n12,22\n' >hdr.csv
both "--header : --colsep , '{=n2 s/2/X/ =}'" -k --header : --colsep , echo '{=n2 s/2/X/ =}' '{=n1 $_=$_*2=}' :::: hdr.csv
both "--header : with --parens" -k --header : --parens '<<>>' echo '<<foo $_.="y" >>' ::: foo a

# --- 15. --compress (parallel compresses only its temporary files), -u --tag (man parallel: -u)
both "-u --tag: the output untagged, as parallel's" -j1 -u --tag echo ::: a b
both "-u --tagstring X: the same" -j1 -u --tagstring X echo ::: a
both "-u --line-buffer: an error, as parallel's" -u --line-buffer echo ::: a
run gp -k --compress echo ::: a b
is "$rc:$out" "0:a
b" "--compress: accepted, the output as without it"
run gp -k --compress-program gzip --decompress-program 'gzip -dc' echo ::: a
is "$rc:$out" "0:a" "--compress-program, --decompress-program: accepted"

# --- 14. --csv: quoted fields with commas and newlines (man parallel: --csv; Text::CSV's rules)
printf 'a,"b,c",d\n"x\ny",2,3\n"q""r",,\n\n a , b \n' >c.csv
if perl -MText::CSV -e 1 2>/dev/null; then
	both "--csv: quoted commas, a quoted newline, doubled quotes, empty fields" -k --csv echo '{1}\|{2}\|{3}' :::: c.csv
	both "--csv --colsep ';': the separator, columns trimmed (as with --colsep)" -k --csv --colsep ';' echo '{1}\|{2}' ::: 'a;"b;c"' ' x ; y '
	both "--csv --header :" -k --csv --header : echo '{n2}' ::: n1,n2 '1,"a,b"'
	both "--csv: a record across ::: values" -k --csv echo {1}-{2} ::: 'a,"b ' 'c",d'
	both "--csv: not CSV: an error (255)" --csv echo {1} ::: 'a"b,c' x
else
	skip "perl's Text::CSV is not installed (libtext-csv-perl; .ci/run installs it)" 5
fi
run gp --csv echo {1} ::: 'a"b,c' x
one_line "$err" "--csv: not CSV: one line"

# --- 13. --round-robin, --bin, --group-by (man parallel: --round-robin, --bin, --group-by;
# man parallel_tutorial: "--pipe" and "Round robin"; the table.csv of --group-by's example)
printf 'UserID, Consumption\n123,    1\n123,    2\n12-3,   1\n221,    3\n221,    1\n2/21,   5\n' >table.csv
tail -n +2 table.csv >"$T/stdin"
both "--group-by: tail -n +2 table.csv | --pipe --colsep , --group-by 1 -kN1 wc" --pipe --colsep , --group-by 1 -kN1 wc
cp table.csv "$T/stdin"
both "--group-by: --header : --group-by UserID -kN1 wc" --pipe --colsep , --header : --group-by UserID -kN1 wc
both "--group-by: 'UserID s/\\D//g' -kN1" --pipe --colsep , --header : --group-by 'UserID s/\D//g' -kN1 cat
both "--group-by: an unknown column is an error (255)" --pipe --colsep , --header : --group-by Nope -kN1 cat
both "--header : --rrs: the header with every block" --pipe --header : --rrs -N2 -k cat
seq 10 >"$T/stdin"
both "--round-robin: -j3 -N2 blocks in turn over 3 tasks" -k --pipe --round-robin -j3 -N2 'echo job {#} {%}; cat'
both "--round-robin: fewer blocks than slots, fewer tasks" -k --pipe --round-robin -j3 -N4 'echo job {#}; cat'
both "--bin 1: value % slots picks the slot (0: the last)" -k --pipe --bin 1 -j3 'echo job {#} slot {%}; cat'
both "--bin '1 \$_*=2'" -k --pipe --bin '1 $_*=2' -j3 'echo job {#}; cat'
printf 'k,v\n1,a\n2,b\n3,c\n4,d\n' >"$T/stdin"
both "--bin NAME --header :: the header line is no task's" -k --pipe --header : --bin k --colsep , -j2 'echo job {#}; cat'
both "--round-robin --header :: each task's first block has it" -k --pipe --header : --round-robin -N1 -j2 'echo job {#}; cat'
seq 100 >s100
both "--pipe-part --round-robin: a part a slot" -k --pipe-part -a s100 --round-robin -j2 'wc -l'
seq 6 >"$T/stdin"
gp -k --pipe --round-robin -N1 -j2 --joblog rr.log cat <"$T/stdin" >/dev/null
is "$(cut -f1,5,6,7 rr.log | tail -n +2)" "$(printf '1\t6\t6\t0\n2\t6\t6\t0')" "--round-robin: one record a task, Send the bytes given to it"
gp -k --pipe --bin 1 -j3 --joblog bin.log cat <"$T/stdin" >/dev/null
is "$(cut -f1,5,7 bin.log | tail -n +2)" "$(printf '1\t4\t0\n2\t4\t0\n3\t4\t0')" "--bin: one record a slot, Send the lines given to it (parallel: 0)"
seq 100000 >"$T/stdin"
run gp --pipe --round-robin -j2 --block 10k 'head -1' <"$T/stdin"
is "$rc" 0 "--round-robin: a task that stops reading ends the others' data no later than theirs"
run gp --pipe --bin 1 -j auto cat <"$T/stdin"
is "$rc" 255 "--bin -j auto: refused, its tasks start once (255)"
one_line "$err" "--bin -j auto: one line"
rm -f "$T/stdin"

# --- 15b. --ctag, --ctagstring, --color (man parallel: --ctag, --color): byte for byte
for a in "--ctag echo" "--ctagstring X{} echo" "--color echo" "--ctag printf x%s\\ny"; do
	# shellcheck disable=SC2086 # the options' words
	parallel -k $a ::: a b c </dev/null >ctag.p 2>/dev/null
	# shellcheck disable=SC2086
	gp -k $a ::: a b c </dev/null >ctag.g 2>/dev/null
	is "$(od -c ctag.g)" "$(od -c ctag.p)" "$a: parallel's colours, bytes"
done
(for i in $(seq 1 40); do for j in $(seq 1 $((i % 7 + 1))); do printf '%s\tx%s\n' "$i" "$j"; done; done) >g.tsv
both "--pipe-part --group-by 1: parallel's split positions" -k --pipe-part -a g.tsv --group-by 1 'wc -l'
both "--pipe-part --group-by '1 perl', --block 100" -k --pipe-part -a g.tsv --group-by '1 $_ = int($_/10)' --block 100 'sort -u | cut -f1 | tr "\n" ,; echo'
both "--pipe-part: the default blocks, 10 a slot of parallel's -j" -k --pipe-part -a g.tsv 'wc -l'
run gp --pipe-part -a g.tsv --group-by x cat
is "$rc" 255 "--pipe-part --group-by NAME: refused as in parallel (255)"
one_line "$err" "--pipe-part --group-by NAME: one line"
