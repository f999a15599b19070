#!/usr/bin/env bash
# farmsim.sh: one farm over many simulated nodes (tests/tools/farmsim: the
# farm's real coordination code, nodes*.c and journal.c, over an in-memory
# shared directory on a simulated clock). Prints one block of figures per
# run; exit 1 when a run lost or doubled an input.
#
#   bash bench/farmsim.sh scale        NODES="4 64 256" TASKS=1000000 SLOTS=4
#   bash bench/farmsim.sh semantics    every emulated filesystem semantics, with node kills
#                                      (NODES=16 TASKS=20000 KILLS=3 SEEDS="1 2 3")
#   bash bench/farmsim.sh -- ARGS...   one run of farmsim with ARGS
set -u
cd "$(dirname "$0")/.." || exit 2
SIM=build/tests/tools/farmsim
make -s -j2 "$SIM" || exit 1
mode=${1:-scale}
[ $# -gt 0 ] && shift
rc=0

run() {
	echo "\$ $SIM $*"
	# the farm's own warnings (a node declared lost) are counted, not printed
	"$SIM" "$@" 2>"${TMPDIR:-/tmp}/farmsim.err.$$" || rc=1
	echo "stderr lines: $(wc -l <"${TMPDIR:-/tmp}/farmsim.err.$$")"
	grep -v 'went silent\|was killed' "${TMPDIR:-/tmp}/farmsim.err.$$" | head -5
	rm -f "${TMPDIR:-/tmp}/farmsim.err.$$"
	echo
}

case $mode in
scale)
	for n in ${NODES:-4 64 256}; do
		run -n "$n" -t "${TASKS:-1000000}" -s "${SLOTS:-4}" ${EXTRA:-}
	done
	;;
semantics)
	for seed in ${SEEDS:-1 2 3}; do
		for fs in "" "--ttl 3" "--ttl 3 --nocto" "--append-delay 5" "--nolocks" \
		    "--ttl 3 --nocto --append-delay 5 --nolocks"; do
			# shellcheck disable=SC2086
			run -n "${NODES:-16}" -t "${TASKS:-20000}" -s "${SLOTS:-4}" --kills "${KILLS:-3}" \
			    --spread 0.5 --seed "$seed" $fs
		done
	done
	;;
--)
	run "$@"
	;;
*)
	echo "usage: bash bench/farmsim.sh scale|semantics|-- ARGS" >&2
	exit 2
	;;
esac
exit $rc
