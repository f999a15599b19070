#!/usr/bin/env bash
# mps-mem.sh: how much of an MPS pinned-memory limit a client can allocate,
# at full SMs and under an SM cap: the context's own reservation counts
# against the limit. Read-only for the card; each daemon comes from
# gpupack mps exec and is stopped when its command ends.
set -u
cd "$(dirname "$0")/../.." || exit 1
GP=${GP:-build/gpupack}
GW=${GW:-build/gpupack-work}
OUT=${OUT:-/tmp}
rep="$OUT/mps-mem.md"
{
	echo "# MPS pinned-memory limit: what a client can allocate"
	echo
	echo "date: $(date -u +%FT%TZ); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
	echo
	echo "| daemon limits | client | mem_free seen by the client | alloc 256M | 384M | 448M | 512M | 768M |"
	echo "|---|---|---|---|---|---|---|---|"
} >"$rep"
row() { # $1 label, then gpupack mps exec options
	label=$1; shift
	free=$("$GP" mps exec "$@" -- "$GW" info 2>/dev/null | python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); print(round(d["mem_free"]/2**20), "MiB")')
	cells=""
	for m in 256 384 448 512 768; do
		if "$GP" mps exec "$@" -- "$GW" alloc --mib "$m" >/dev/null 2>&1; then cells="$cells | ok"; else cells="$cells | fails"; fi
	done
	echo "| $label | gpupack-work | $free$cells |" >>"$rep"
}
row "--mem 1G" --mem 1G
row "--mem 1G --sm 25" --mem 1G --sm 25
row "--mem 1G --sm 50" --mem 1G --sm 50
row "--mem 2G" --mem 2G
free=$("$GW" info | python3 -c 'import json,sys; d=json.loads(sys.stdin.readline()); print(round(d["mem_free"]/2**20), "MiB", "context", round(d["context_mem_used"]/2**20), "MiB")')
echo "| no MPS | gpupack-work | $free | | | | | |" >>"$rep"
cat "$rep"
echo "RESULT mps-mem written"
