#!/bin/sh
# mig-apply.t: what `mig apply PLAN_FILE` accepts of a plan file's fields
# (src/share/mig_apply.c); tests/cli/mig.t covers planning and applying.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

gp() {
	# shellcheck disable=SC2086
	$GPUPACK "$@"
}
f="$T/h100-mig.topo"
cp "$TOPO/h100-80gb-mig.topo" "$f"
run gp --sim "$f" mig plan --want 2x3g.40gb --save "$T/plan"
is "$rc" 0 "a plan to edit"
orig=$(cat "$f")

# START+SIZE: numbers of a field at most 31 characters long (leading zeros allowed)
z28=$(printf '%028d' 0)
sed "s/^create 3g.40gb 0+4\$/create 3g.40gb 0+${z28}4/" "$T/plan" >"$T/p31"
sed "s/^create 3g.40gb 0+4\$/create 3g.40gb 0+${z28}04/" "$T/plan" >"$T/p32"
run gp --sim "$f" mig apply --dry-run "$T/p31"
is "$rc" 0 "a placement of 31 characters (0+000...4): accepted"
run gp --sim "$f" mig apply --dry-run "$T/p32"
is "$rc" 2 "one of 32 characters: refused"
like "$err" "placement '0\+${z28}04' is not START\+SIZE" "it says which"
for bad in 32+1 0+33 30+3 0+0 -1+2 0-4 4; do
	sed "s/^create 3g.40gb 0+4\$/create 3g.40gb $bad/" "$T/plan" >"$T/pb"
	run gp --sim "$f" mig apply "$T/pb"
	is "$rc:$(printf '%s\n' "$err" | wc -l)" "2:1" "placement $bad: refused with one line"
done
is "$(cat "$f")" "$orig" "nothing applied"
