#!/bin/bash
# shellcheck disable=SC2154 # out, err and rc are set by lib.sh's run
# completion.t: completion/gpupack.bash offers what each command's one
# option table declares (gpupack --completion-helper), checked against each
# command's --help: every option listed there, and no other; after an
# option that takes a value, values (or nothing), never the options.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

# the completion script, run by bash as a shell would: complete WORDS... (the last is the cursor's)
complete_line() {
	bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_gpupack
		printf "%s\n" "${COMPREPLY[@]}"' _ "$GPUPACK_SRC/completion/gpupack.bash" "$GPUPACK" "$@" |
		grep -v '^$' | sort -u
}
# the options a --help lists (sections "  -x, --name ...", "  --name ...", "also: ..."), one a line
help_names() {
	awk '
	/^GNU parallel.s options that gpupack refuses/ { exit }
	/^  also: / || (also && /^        -/) {
		also = 1; sub(/^  also: /, ""); n = split($0, w, " ")
		for (i = 1; i <= n; i++) { x = w[i]; sub(/,$/, "", x); if (x ~ /^-/) print x }
		next
	}
	{ also = 0 }
	/^  -/ {
		line = substr($0, 3)
		if (match(line, /^-[a-zA-Z0-9]/)) { print substr(line, 1, 2); line = substr(line, 3); sub(/^, /, "", line) }
		if (match(line, /^--[a-z0-9-]+/)) print substr(line, RSTART, RLENGTH)
	}' | sort -u
}
# the options a --help's usage line names for a subcommand (what it takes), plus --help
usage_names() {
	{ awk -v me="^(usage: |       )gpupack $1 $2 " -v any="gpupack $1 [a-z]+ " '
		$0 ~ me { on = 1; print; next }
		$0 ~ any || /^$/ { on = 0 }
		on' | grep -oE -- '--[a-z][a-z-]*'; printf '%s\n' -h --help; } | sort -u
}

# ---- commands and subcommands --------------------------------------------------
is "$(complete_line "" | tr '\n' ' ')" "--help --sim --sim-write --version bench devices mig mps run timeslice " \
    "gpupack <TAB>: the commands and global options"
is "$(complete_line mig "" | tr '\n' ' ')" "apply clear plan profiles " "mig <TAB>: its subcommands"
is "$(complete_line mps "" | tr '\n' ' ')" "env exec start status stop " "mps <TAB>: its subcommands"
is "$(complete_line timeslice "" | tr '\n' ' ')" "get set " "timeslice <TAB>: its subcommands"

# ---- every command's options: those its --help lists --------------------------------
for c in devices run bench; do
	want=$($GPUPACK $c --help | help_names)
	got=$(complete_line $c - | grep -vx -- '--' | grep '^-')
	is "$(diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | grep '^[<>]' | tr '\n' ' ')" "" \
	    "$c -<TAB>: every option of its --help, and no other"
done
for cs in "mps start" "mps stop" "mps status" "mps env" "mps exec" "mig profiles" "mig plan" \
    "mig apply" "mig clear" "timeslice get" "timeslice set"; do
	set -- $cs
	all=$($GPUPACK "$1" --help | help_names)
	want=$($GPUPACK "$1" --help | usage_names "$1" "$2")
	got=$(complete_line "$1" "$2" - | grep -vx -- '--' | grep '^-')
	is "$(diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | grep '^[<>]' | tr '\n' ' ')" "" \
	    "$cs -<TAB>: the options its usage line names"
	is "$(comm -13 <(printf '%s\n' "$all") <(printf '%s\n' "$got") | tr '\n' ' ')" "" \
	    "$cs -<TAB>: each one --help describes"
done
like "$(complete_line mig plan --e | tr '\n' ' ')" "--effort" "mig plan --e<TAB>: --effort"

# ---- after an option that takes a value: values, never options ------------------------
for line in "run --gpus" "run --mem" "run -j" "mps start --gpus" "mps start --mem" "mig plan --effort" \
    "devices --gpus" "bench --sizes" "mps exec --sm"; do
	set -- $line
	got=$(complete_line "$@" "")
	is "$(printf '%s\n' "$got" | grep -c '^-')" 0 "$line <TAB>: no options offered"
done
is "$(complete_line run --share "" | tr '\n' ' ')" "exclusive mps timeslice " "run --share <TAB>: the modes"
is "$(complete_line mps start --priority "" | tr '\n' ' ')" "low normal " "mps start --priority <TAB>: its values"
is "$(complete_line timeslice set "" | tr '\n' ' ')" "default long medium short " "timeslice set <TAB>: the policies"
touch "$T/jobs.txt"
is "$(cd "$T" && complete_line mig plan --requests jo)" "jobs.txt" "mig plan --requests <TAB>: files"
like "$(complete_line --sim h100 | tr '\n' ' ')" "h100-80gb h100-80gb-mig" "--sim <TAB>: the topology names"

# ---- the helper itself ---------------------------------------------------------------
run $GPUPACK --completion-helper nosuch
is "$rc" 2 "--completion-helper of no command: exit 2"
one_line "$err" "--completion-helper nosuch: one line"

# ---- zsh: the same completion through bashcompinit (completion/_gpupack) -------------------------
if command -v zsh >/dev/null 2>&1; then
	got=$(PATH="$(dirname "$GPUPACK"):$PATH" zsh -fc '
		autoload -U +X compinit && compinit -u -d "$1/zcomp"; autoload -U +X bashcompinit && bashcompinit
		source "$2/completion/gpupack.bash"; setopt ksharrays
		COMP_WORDS=(gpupack run --share ""); COMP_CWORD=3; _gpupack; print -l -- "${COMPREPLY[@]}"' _ "$T" "$GPUPACK_SRC" 2>&1)
	is "$(printf '%s\n' "$got" | sort | tr '\n' ' ')" "exclusive mps timeslice " "zsh: run --share <TAB>: the modes"
	grep -q '^#compdef gpupack' "$GPUPACK_SRC/completion/_gpupack"
	ok $? "completion/_gpupack is a zsh completion for gpupack"
else
	skip "zsh is not installed" 2
fi
