#!/usr/bin/env bash
# idle-contexts.sh: do idle CUDA contexts cost a measured process anything?
# `gpupack bench` keeps 16 plain workers and 16 MPS clients alive for the
# whole run; while one point is measured, the others sit idle with their
# contexts made. This measures one process's SGEMM throughput alone and with
# those idle neighbours, side by side on one GPU (run on the device machine,
# from the repository root, with build/gpupack and build/gpupack-work built).
#
#   bash bench/idle-contexts.sh [N]      (N commands per size and block, default 8)
#
# The measured process is one `gpupack-work serve` (plain, no MPS), sent the
# same matmul commands in five blocks, ABCBA:
#   A  alone
#   B  with 16 idle plain `gpupack-work serve` processes
#   C  with those and a private MPS daemon with 16 idle clients (bench's state
#      during a time-slicing point once its MPS workers exist)
# Sizes: N=256 batched 4 and N=512 (launch-bound: the noisy points) and
# N=2048 (the GPU full). Report: medians per block and the ratios B/A and C/A
# (A, B: both of their blocks) in $OUT/idle-contexts.md. Stops every process
# and daemon it started; changes no card setting.
set -u
cd "$(dirname "$0")/.." || exit 2

N=${1:-8}
case $N in *[!0-9]* | "") echo "usage: bash bench/idle-contexts.sh [N]" >&2; exit 2 ;; esac
OUT=${OUT:-$PWD/gpu-out}
GP=${GPUPACK:-$PWD/build/gpupack}
GW=${GPUPACK_WORK:-$PWD/build/gpupack-work}
WORK=$(mktemp -d /tmp/gpidle.XXXXXX)
export GPUPACK_STATE_DIR="$WORK/state"
REPORT="$OUT/idle-contexts.md"
IDLE_PLAIN=()
IDLE_MPS=()
mkdir -p "$OUT"

UUID=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0 2>/dev/null | head -n 1)
export CUDA_VISIBLE_DEVICES=$UUID

declare -A FIFO_FD
stop_group() { # NAME: end the idle workers of a group (end of their input) and wait for them
	local -n g=$1
	local p fd=${FIFO_FD[$1]:-}
	[ -n "$fd" ] && exec {fd}>&-
	FIFO_FD[$1]=""
	for p in "${g[@]}"; do wait "$p" 2>/dev/null; done
	g=()
}

cleanup() {
	[ -n "${W0_PID:-}" ] && kill "$W0_PID" 2>/dev/null
	for p in "${IDLE_MPS[@]}" "${IDLE_PLAIN[@]}"; do kill "$p" 2>/dev/null; done
	stop_group IDLE_MPS
	stop_group IDLE_PLAIN
	"$GP" mps stop --all --force --timeout 5 >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT

# start_idle NAME COUNT [ENV...]: COUNT serve workers that make their context and wait
start_idle() {
	local name=$1 n=$2 i k fd ready
	local -n members=$1
	shift 2
	# one FIFO held open here: the workers wait on it for a command that never comes,
	# and see the end of their input when it is closed
	mkfifo "$WORK/$name.fifo"
	exec {fd}<>"$WORK/$name.fifo"
	FIFO_FD[$name]=$fd
	for ((i = 0; i < n; i++)); do
		(
			# not the FIFOs' own descriptors: a worker holding one open never sees its end
			for f in "${FIFO_FD[@]}"; do [ -n "$f" ] && eval "exec $f>&-"; done
			exec env "$@" "$GW" serve <"$WORK/$name.fifo" >"$WORK/$name.$i.ready" 2>&1
		) &
		members+=($!)
	done
	for ((k = 0; k < 600; k++)); do
		ready=0
		for ((i = 0; i < n; i++)); do
			grep -q '"ok":true' "$WORK/$name.$i.ready" 2>/dev/null && ready=$((ready + 1))
		done
		[ "$ready" -eq "$n" ] && return 0
		sleep 0.1
	done
	echo "idle workers of $name not ready: $(head -c 300 "$WORK/$name.0.ready")" >&2
	return 1
}

coproc W0 { "$GW" serve 2>"$WORK/w0.err"; }
read -r ready <&"${W0[0]}" || { echo "the measured worker did not start: $(cat "$WORK/w0.err")"; exit 1; }

CMDS=("matmul --n 256 --iters 20000 --batched 4" "matmul --n 512 --iters 15000" "matmul --n 2048 --iters 900")
LABELS=("N=256 batched 4" "N=512" "N=2048")

# block NAME: N commands of each size, interleaved, TFLOP/s appended to $WORK/NAME.<size index>
block() {
	local name=$1 r s line tf
	for s in 0 1 2; do # untimed: the first of a size after a change
		echo "${CMDS[s]}" >&"${W0[1]}"
		read -r line <&"${W0[0]}"
	done
	for ((r = 0; r < N; r++)); do
		for s in 0 1 2; do
			echo "${CMDS[s]}" >&"${W0[1]}"
			read -r line <&"${W0[0]}" || { echo "measured worker ended: $(cat "$WORK/w0.err")"; exit 1; }
			tf=$(printf '%s' "$line" | sed -n 's/.*"tflops":\([0-9.e+-]*\).*/\1/p')
			[ -n "$tf" ] || { echo "bad line: $line"; exit 1; }
			echo "$tf" >>"$WORK/$name.$s"
		done
	done
}

block A1
start_idle IDLE_PLAIN 16 || exit 1
block B1
"$GP" mps start --gpu 0 >/dev/null 2>&1 || { echo "mps start failed"; exit 1; }
eval "$("$GP" mps env --gpu 0)"
MPS_ENV=("CUDA_MPS_PIPE_DIRECTORY=$CUDA_MPS_PIPE_DIRECTORY" "CUDA_MPS_LOG_DIRECTORY=$CUDA_MPS_LOG_DIRECTORY")
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
start_idle IDLE_MPS 16 "${MPS_ENV[@]}" || exit 1
block C
stop_group IDLE_MPS
"$GP" mps stop --all --timeout 10 >/dev/null 2>&1
block B2
stop_group IDLE_PLAIN
block A2

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
{
	echo "# Idle CUDA contexts beside a measured process"
	echo
	echo "- date: $(date -u '+%F %T') UTC"
	echo "- GPU: $(nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader -i 0)"
	echo "- command: \`bash bench/idle-contexts.sh $N\`: one \`gpupack-work serve\` (plain) sent $N commands"
	echo "  of each size per block, interleaved, after one untimed command of each; blocks A B C B A"
	echo "- A alone; B with 16 idle plain serve workers; C with those and an MPS daemon with 16 idle clients"
	echo
	echo "| size | A1 | B1 | C | B2 | A2 | B/A | C/A |"
	echo "|---|---|---|---|---|---|---|---|"
	for s in 0 1 2; do
		a=$(cat "$WORK/A1.$s" "$WORK/A2.$s" | median)
		b=$(cat "$WORK/B1.$s" "$WORK/B2.$s" | median)
		c=$(median <"$WORK/C.$s")
		printf '| %s |' "${LABELS[s]}"
		for k in A1 B1 C B2 A2; do printf ' %.3g |' "$(median <"$WORK/$k.$s")"; done
		awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { printf " %.3f | %.3f |\n", b / a, c / a }'
		echo "RESULT idle ${LABELS[s]}: alone $a, 16 idle plain $b (x$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", b / a }')), + MPS daemon and 16 idle clients $c (x$(awk -v a="$a" -v c="$c" 'BEGIN { printf "%.3f", c / a }')) TFLOP/s" >&2
	done
	echo
	echo "Medians of TFLOP/s; B/A and C/A from the medians of both A blocks and both B blocks."
	echo
	echo "## Every value"
	for k in A1 B1 C B2 A2; do
		for s in 0 1 2; do
			echo "- $k ${LABELS[s]}: $(tr '\n' ' ' <"$WORK/$k.$s")"
		done
	done
} >"$REPORT" 2>"$WORK/results"
cat "$WORK/results"
cat "$REPORT"
