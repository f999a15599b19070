#!/bin/sh
# shellcheck disable=SC2086 # option lists split on purpose
# run-stop-resume.t: --resume refuses, in one line and changing nothing, a
# run whose options would group the inputs into other tasks (-N, -n, -X,
# --colsep, --header, -d, :::+, --link, ...), as it refuses another command;
# the same options, or more inputs at the end, resume. No error exit
# changes a file: a joblog is not cut to its header before an exit 255.
. "${GPUPACK_SRC:-$(dirname "$0")/../..}/tests/lib.sh"

R() { $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice "$@"; }
cd "$T" || exit 1
seqs() { awk -F'\t' 'NR > 1 { print $1 }' "$1" | sort -n | tr '\n' ' '; }
sum() { cat "$@" 2>/dev/null | cksum; }

# first RUN-OPTS, then each of CHANGES must be refused (one line, exit 255, nothing run or changed)
refused() {
	first=$1 change=$2 what=$3
	rm -f jl jl.gpupack ran
	R -j 1 --joblog jl $first --shell 'echo {} >>ran' ::: 1 2 3 4 ::: a b c >/dev/null 2>&1
	# a stop after four tasks: cut the joblog to them
	head -n 5 jl >jl.cut && mv jl.cut jl
	before=$(sum jl jl.gpupack)
	: >ran
	run R -j 1 --joblog jl --resume $change --shell 'echo {} >>ran' ::: 1 2 3 4 ::: a b c
	is "$rc:$(printf '%s\n' "$err" | wc -l)" "255:1" "$what: --resume refused, one line"
	like "$err" "^gpupack: run: --resume: joblog 'jl' was written for another command or other inputs" "$what: it says why"
	is "$(cat ran)" "" "$what: nothing ran"
	is "$(sum jl jl.gpupack)" "$before" "$what: the joblog and its identity are as they were"
}

refused "-N 2" "-N 3" "-N 2 then -N 3"
refused "" "-n 2" "-n 2 added"
refused "" "-X" "-X added"
refused "" "--link" "--link added"
refused "" "--colsep ," "--colsep added"
refused "" "-d ," "-d added"
refused "--header :" "" "--header dropped"
refused "" "-r" "-r added"

# :::+ instead of ::: (the second source paired with the first, not crossed)
rm -f jl jl.gpupack ran
R -j 1 --joblog jl --shell 'echo {} >>ran' ::: 1 2 3 ::: a b c >/dev/null 2>&1
head -n 3 jl >jl.cut && mv jl.cut jl
run R -j 1 --joblog jl --resume --shell 'echo {} >>ran' ::: 1 2 3 :::+ a b c
is "$rc" 255 ":::+ where ::: was: --resume refused"

# the same options resume, and inputs may grow at the end (as with parallel)
rm -f jl jl.gpupack ran
R -j 1 --joblog jl -N 2 --colsep , --shell 'echo {1}-{2} >>ran' ::: a,1 b,2 c,3 d,4 >/dev/null 2>&1
head -n 2 jl >jl.cut && mv jl.cut jl
: >ran
run R -j 1 --joblog jl --resume -N 2 --colsep , --shell 'echo {1}-{2} >>ran' ::: a,1 b,2 c,3 d,4 e,5 f,6
is "$rc" 0 "the same options, more inputs: --resume runs"
is "$(seqs jl)" "1 2 3 " "the tasks without a record, once each"

# ---- no error exit changes a file ------------------------------------------------------------
# FILE.gpupack a directory: refused before the joblog is cut to its header
rm -rf jl jl.gpupack
R --joblog jl echo ::: 1 2 >/dev/null 2>&1
before=$(sum jl)
rm -f jl.gpupack && mkdir jl.gpupack
run R --joblog jl echo ::: 3 4
is "$rc:$(printf '%s\n' "$err" | wc -l)" "255:1" "jl.gpupack a directory: exit 255, one line"
is "$(sum jl)" "$before" "and the joblog is as it was (not cut to its header)"
rmdir jl.gpupack

# a first input too long for a command line: refused before the joblog is cut
R --joblog jl echo ::: 1 2 >/dev/null 2>&1
before=$(sum jl jl.gpupack)
head -c 300000 /dev/zero | tr '\0' x >long
run R --joblog jl echo :::: long
is "$rc:$(printf '%s\n' "$err" | wc -l)" "255:1" "an over-long first input: exit 255, one line"
is "$(sum jl jl.gpupack)" "$before" "and the joblog is as it was"

# the identity cannot be written (a full disk): the joblog is not cut either
SHIM="$GPUPACK_BUILD/tests/preload/full-disk.so"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
mkdir -p d && rm -f d/jl*
R --joblog d/jl echo ::: 1 2 >/dev/null 2>&1
before=$(sum d/jl d/jl.gpupack)
FULLDISK_UNDER="$T/d" FULLDISK_AT=0 LD_PRELOAD="$SHIM" R --joblog d/jl echo other ::: 1 2 >/dev/null 2>errf
is "$?:$(wc -l <errf | tr -d ' ')" "255:1" "no room for the new identity: exit 255, one line"
is "$(sum d/jl d/jl.gpupack)" "$before" "and neither the joblog nor its identity changed"

# a farm over nodes: a --resume refused as it reads the earlier runs leaves current and identity be
rm -rf nj nj.*
env GPUPACK_FARM_RUN=a "$GPUPACK" --sim "$TOPO/h100-80gb.topo" run --share timeslice --joblog nj echo ::: 1 2 \
	>/dev/null 2>&1
rm nj.farm/a/parent
before="$(readlink nj.farm/current) $(sum nj.farm/identity)"
run env GPUPACK_FARM_RUN=b "$GPUPACK" --sim "$TOPO/h100-80gb.topo" run --share timeslice --resume --joblog nj \
	echo ::: 1 2 3
is "$rc:$(printf '%s\n' "$err" | wc -l)" "255:1" "a farm over nodes whose runs cannot be read: --resume refused, one line"
is "$(readlink nj.farm/current) $(sum nj.farm/identity)" "$before" "current and identity as they were"
ok "$([ ! -e nj.farm/b ]; echo $?)" "and no run directory made"

# ---- bounded memory for every journal read: Seqs far apart cost nothing per number ------------------
# (a gigabyte of address space is plenty; an ASan build maps terabytes of shadow: no limit there)
if ASAN_OPTIONS=help=1 $GPUPACK --version 2>&1 | grep -q AddressSanitizer; then VLIMIT=unlimited; else VLIMIT=1048576; fi
hdr=$(printf 'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand')
rec() { printf '%s\t:\t1.000\t     0.100\t0\t0\t%s\t0\t%s\n' "$1" "$2" "$3"; }
rm -f jr* ran
{ echo "$hdr"; rec 1 0 'echo 1 >>ran'; rec 3 1 'echo 3 >>ran'; rec 100000000 2 'echo 100000000 >>ran'; } >jr
(ulimit -v $VLIMIT && timeout 120 $GPUPACK --sim "$TOPO/h100-80gb.topo" run --share timeslice -k --retry-failed \
	--joblog jr) >out 2>errf
is "$?" 0 "--retry-failed, a record of Seq 1e8: runs in bounded memory (exit 0)"
is "$(sort -n ran | tr '\n' ' ')" "3 100000000 " "exactly the failed commands, once each"
is "$(awk -F'\t' 'NR > 4 { print $1 }' jr | sort -n | tr '\n' ' ')" "3 100000000 " "recorded with their own numbers"

# a farm over nodes: a record of Seq 2^40 in a run it resumes
rm -rf nj nj.* ran
env GPUPACK_FARM_RUN=a "$GPUPACK" --sim "$TOPO/h100-80gb.topo" run --share timeslice --joblog nj \
	--shell 'echo {} >>ran' ::: 1 2 >/dev/null 2>&1
log=$(ls nj.farm/a/log/* | head -n 1)
rec 1099511627776 0 'echo far' >>"$log"
: >ran
(ulimit -v $VLIMIT && timeout 120 env GPUPACK_FARM_RUN=b "$GPUPACK" --sim "$TOPO/h100-80gb.topo" run \
	--share timeslice --resume --joblog nj --shell 'echo {} >>ran' ::: 1 2 3) >out 2>errf
is "$?" 0 "a farm journal holding Seq 2^40: --resume in bounded memory (exit 0)"
is "$(cat ran)" "3" "it runs what no run recorded, once"
