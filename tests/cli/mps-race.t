#!/bin/sh
# shellcheck disable=SC2086 # $G is a command line
# mps-race.t: `mps start` while the same user swaps its pipe or log directory
# for a symlink (share/mps.c). Whatever the timing, a daemon it started is
# either reported (and then its record, pid file and socket are in the
# directories gpupack holds) or stopped, and gpupack writes nothing through
# the link. First at the worst moment, made certain by a control program that
# swaps just before the daemon starts; then a swapper racing 40 starts.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"
. "$GPUPACK_SRC/tests/cli/mps-lib.sh"

cd "$T" || exit 1
K() { timeout -s KILL 30 "$@"; }
D0="$STATE/mps/$U0"
mkdir -p -m 700 "$STATE" "$STATE/mps" "$T/target"

# the daemons of this test that still run (the double, by its pipe directory under $T)
daemons() {
	for f in $(grep -lsz "^CUDA_MPS_PIPE_DIRECTORY=$T/" /proc/[0-9]*/environ); do
		p=${f#/proc/}
		p=${p%/environ}
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = fake-mps-contro ] && alive "$p" && echo "$p"
	done
}
# what gpupack itself would write in a daemon's directories
ours_in() { ls -A "$1" 2>/dev/null | grep -x -e daemon -e lock -e gpupack-start.out; }

# swap-SUB: a control program that, for -d, swaps D0/SUB for a link to target, then starts
for sub in pipe log; do
	cat >"swap-$sub" <<SH
#!/bin/sh
if [ "\${1:-}" = -d ] && [ -d "$D0/$sub" ] && [ ! -L "$D0/$sub" ]; then
	mv "$D0/$sub" "$D0/$sub.real" && ln -s "$T/target" "$D0/$sub"
fi
exec "$TOOLS/fake-mps-control" "\$@"
SH
	chmod +x "swap-$sub"
done

for sub in pipe log; do
	rm -rf "${T:?}/target" "$D0" && mkdir -m 700 "$T/target"
	run K env GPUPACK_MPS_CONTROL="$T/swap-$sub" $G mps start --gpu 0
	ok "$([ -e "$D0/$sub.real" ]; echo $?)" "$sub/ swapped for a link just before the daemon started"
	is "$rc" 3 "$sub/ swapped: the start is refused (exit 3)"
	one_line "$err" "$sub/ swapped: one line"
	like "$err" "changed while the daemon started.*stopped" "$sub/ swapped: saying the daemon was stopped"
	is "$(daemons)" "" "$sub/ swapped: no daemon left running"
	is "$(ours_in "$T/target")" "" "$sub/ swapped: gpupack wrote nothing through the link"
	rm -f "$D0/$sub"
	run K $G mps start --gpu 0
	is "$rc" 0 "$sub/ swapped: the next start, with the link gone, runs"
	run K $G mps stop --gpu 0
	is "$(daemons)" "" "$sub/ swapped: and its stop leaves none"
done

# ---- a swapper racing 40 starts -----------------------------------------------------------------
rm -rf "${T:?}/target" "$D0" && mkdir -m 700 "$T/target"
cat >swapper <<SH
#!/bin/sh
# swap pipe/ or log/ for a link and back, as fast as it goes, until told to stop
while [ ! -e "$T/stop-swapping" ]; do
	for sub in pipe log; do
		if [ -d "$D0/\$sub" ] && [ ! -L "$D0/\$sub" ] && mv "$D0/\$sub" "$D0/\$sub.away" 2>/dev/null; then
			ln -s "$T/target" "$D0/\$sub" 2>/dev/null
			rm -f "$D0/\$sub" 2>/dev/null
			mv "$D0/\$sub.away" "$D0/\$sub" 2>/dev/null
		fi
	done
done
SH
chmod +x swapper
./swapper &
SW=$!
_mps_pids="$_mps_pids $SW"
unreported=0 bad=0 started=0 refused=0
for i in $(seq 40); do
	run K $G mps start --gpu 0
	if [ "$rc" = 0 ]; then
		started=$((started + 1))
		p=$(daemon_pid "$U0")
		# reported: the daemon is the record's, and its pid file is where gpupack keeps it
		[ -n "$p" ] && [ "$(daemons)" = "$p" ] || bad=$((bad + 1))
		K $G mps stop --gpu 0 >/dev/null 2>&1 || K $G mps stop --gpu 0 >/dev/null 2>&1
	else
		refused=$((refused + 1))
		[ -z "$(daemons)" ] || unreported=$((unreported + 1))
	fi
	for p in $(daemons); do kill -9 "$p"; done
	rm -f "$D0/pipe.away/"* 2>/dev/null
done
touch "$T/stop-swapping"
wait "$SW"
diag "40 starts beside the swapper: $started started, $refused refused"
is "$unreported" 0 "no refused start left a daemon running"
is "$bad" 0 "every start that said so left exactly its recorded daemon"
is "$(ours_in "$T/target")" "" "gpupack wrote nothing through a link"
