#!/bin/bash
# shellcheck disable=SC2034 # CLEANUP is run by lib.sh at exit
# run-bar.t: --bar in a real terminal (tmux), with tasks that print. The bar
# shows a percentage and an ETA from the start (the ::: values are counted),
# stays on one line of its own (redrawn in place, never duplicated), and no
# task's output joins it. The tasks wait on a gate the test opens once it
# has seen the bar mid-run, so nothing depends on timing: every wait polls
# the pane, with a generous deadline.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

if ! command -v tmux >/dev/null 2>&1; then
	echo "1..0 # SKIP tmux is not installed"
	trap - EXIT
	rm -rf "$T"
	exit 0
fi
cd "$T" || exit 1
SOCK="$T/tmux.sock"
CLEANUP='tmux -S "$SOCK" kill-server 2>/dev/null'
tmux -S "$SOCK" new-session -d -x 100 -y 40 -s bar "env PS1='$ ' bash --norc --noprofile"

pane() { tmux -S "$SOCK" capture-pane -p -t bar; }
# wait_for REGEX: poll the pane until a line matches (60 s at most); 0 when it did
wait_for() {
	local i=0
	while [ $i -lt 600 ]; do
		pane | grep -Eq -- "$1" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# 20 tasks print a line; tasks 5.. wait for the gate (4 at once: 4 end, 4 wait, 12 queued)
printf '%s\n' "cd '$T' && $GPUPACK --sim '$TOPO/h100-80gb.topo' run --share timeslice -j 4 --bar \
'echo hello {}; [ {} -le 4 ] || while [ ! -e gate ]; do sleep 0.05; done' ::: \$(seq 20); echo END-OF-RUN" >cmd
tmux -S "$SOCK" send-keys -t bar "bash ./cmd" Enter

BAR='^[0-9]+% [0-9]+:[0-9]+=[0-9]+[smhd]'
wait_for "^20% 4:16=[0-9]+s \[0:4/4\]"
ok $? "mid-run: the bar shows a percentage, done:left and an ETA (20% 4:16=Ns)"
mid=$(pane)
is "$(printf '%s\n' "$mid" | grep -Ec "$BAR")" 1 "mid-run: one bar line"
is "$(printf '%s\n' "$mid" | grep -v '^$' | tail -n 1 | grep -Ec "$BAR")" 1 "the bar is the last line"
is "$(printf '%s\n' "$mid" | grep -Ec '^hello [1-4]$')" 4 "the first 4 tasks' lines, each alone"

touch gate
wait_for '^END-OF-RUN$'
ok $? "the run ends once the gate opens"
end=$(pane)
is "$(printf '%s\n' "$end" | grep -Ec '^hello ([1-9]|1[0-9]|20)$')" 20 "every task's line, each alone on its line"
is "$(printf '%s\n' "$end" | grep -c 'hello.*%\|%.*hello')" 0 "no task output joined the bar"
is "$(printf '%s\n' "$end" | grep -Ec "$BAR")" 1 "one bar line at the end: redrawn in place"
like "$(printf '%s\n' "$end" | grep -E "$BAR")" '^100% 20:0=0s \[0:0/4\]' "and it reached 100%"
like "$end" 'gpupack: run: 20 tasks, 0 failed' "then the summary line"
