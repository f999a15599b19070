#!/bin/bash
# in-chroot.sh: what packaging/fresh-debian-debs.sh runs inside the fresh
# Debian 12, as root, with the packages in /debs and the tree in /src:
# install both, use them (gpupack --version, a simulated MPS farm, the
# plugin loaded by slurmd in a four-node Slurm on this host), purge both,
# and check that purging left nothing of theirs. One line per step.
set -u
export DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin
fail=0
step() { echo; echo "\$ $*"; "$@"; local rc=$?; echo "[exit $rc]"; [ "$rc" -eq 0 ] || fail=1; return "$rc"; }
check() { if eval "$2"; then echo "PASS $1"; else echo "FAIL $1"; fail=1; fi; }
snapshot() { find /etc /usr /var/lib /opt -xdev -path /var/lib/dpkg -prune -o -path /var/lib/apt -prune -o \
	-path /var/cache -prune -o -print 2>/dev/null | sort; }

step apt-get update -qq
# Slurm first (what the plugin depends on), so that the purge check sees only ours
step apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends slurmctld slurmd slurm-client munge
snapshot >/tmp/before
step apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends /debs/gpupack_*.deb /debs/gpupack-slurm-plugin_*.deb
step dpkg -l gpupack gpupack-slurm-plugin
step gpupack --version
# minbase has no man-db: the page itself
check "the man page is installed" "[ -s /usr/share/man/man1/gpupack.1.gz ]"
C=/usr/libexec/gpupack/sim-mps-client
echo
echo "\$ gpupack --sim h100-80gb-x8 run --share mps --sm 25 -j 2 --summary $C --ms 2{} ::: \$(seq 16)"
out=$(gpupack --sim h100-80gb-x8 run --share mps --sm 25 -j 2 --summary "$C" --ms 2{} ::: $(seq 16) 2>/tmp/farm.err)
rc=$?
printf '%s\n' "$out" | head -n 3
echo "... ($(printf '%s\n' "$out" | wc -l) lines)"
cat /tmp/farm.err
echo "[exit $rc]"
check "a simulated MPS farm: 16 clients of the packaged stand-in, held to sm 25" \
	"[ $rc -eq 0 ] && [ \$(printf '%s\n' \"\$out\" | grep -c '^mps=1 .*sm=25.0') -eq 16 ]"
check "its summary says SIMULATED" "grep -q 'SIMULATED GPUs' /tmp/farm.err"
step cat /etc/slurm/plugstack.conf.d/gpupack.conf

# ---- the plugin from the package, loaded by slurmd ------------------------------------------
echo
echo "== the plugin in a four-node Slurm on this host (tests/slurm/lib.sh, the package's plugin)"
cat >/tmp/plugin.sh <<'EOF'
export GPUPACK_SRC=/src GPUPACK=/usr/bin/gpupack GPUPACK_BUILD=/nonexistent
export SL_PLUGIN=/usr/lib/x86_64-linux-gnu/slurm-wlm/gpupack_spank.so
. /src/tests/lib.sh
. /src/tests/slurm/lib.sh
SL_TOPO=/usr/share/gpupack/topologies/h100-80gb-x8.topo
slurm_up "control=/usr/libexec/gpupack/sim-mps-control sim=$SL_TOPO grace=2" || { ok 1 "the cluster comes up"; exit 1; }
ok 0 "a four-node Slurm comes up, plugstack.conf: $(cat "$SL_DIR/etc/plugstack.conf")"
run as_user srun --help
like "$out" "--gpupack-mps" "srun --help lists --gpupack-mps (the plugin loads)"
run as_user srun -N2 -n2 --gres=gpu:1 --gpupack-mps=sm=25 /usr/libexec/gpupack/sim-mps-client --ms 50
is "$rc" 0 "srun --gpupack-mps=sm=25 on two nodes"
printf '%s\n' "$out" | sed 's/^/#   /'
is "$(printf '%s\n' "$out" | grep -c '^mps=1 .*sm=25.0')" 2 "each task a client of its job's daemon, held to sm 25"
# the job's prolog (slurmd, through the plugin) made the daemons' directories under its default state root
ok "$(ls -d /run/gpupack/n1 /run/gpupack/n2 >/dev/null 2>&1 && echo 0 || echo 1)" \
	"the daemons lived under the plugin's default state root, one per node (/run/gpupack/n1, n2)"
EOF
bash /tmp/plugin.sh
[ $? -eq 0 ] || fail=1

# ---- purge ------------------------------------------------------------------------------------
step apt-get purge -y -qq -o Dpkg::Use-Pty=0 gpupack gpupack-slurm-plugin
snapshot >/tmp/after
left=$(comm -13 /tmp/before /tmp/after)
echo
echo "what is there after the purge and was not before installing (/etc /usr /var/lib /opt):"
echo "${left:-(nothing)}"
check "purge leaves nothing of theirs" "[ -z \"\$left\" ]"
check "no gpupack file left" "[ ! -e /usr/bin/gpupack ] && [ ! -e /usr/libexec/gpupack ] && [ ! -e /etc/slurm/plugstack.conf.d/gpupack.conf ]"
echo
[ "$fail" -eq 0 ] && echo "RESULT: PASS" || echo "RESULT: FAIL"
exit "$fail"
