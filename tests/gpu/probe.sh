#!/usr/bin/env bash
# probe.sh: read-only facts about the lent GPU that gpupack's code relies on:
# nvidia-smi's formats, the MPS control protocol's replies, what an MPS
# client sees under limits, memory costs. Changes no card setting; the one
# MPS daemon it starts lives in a private directory and is stopped at the end.
set -u
OUT=${OUT:-/tmp/probe-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/probe.txt") 2>&1
sec() { printf '\n=== %s\n' "$*"; }
sec date; date -u
sec nvidia-smi; nvidia-smi
sec query-gpu; nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.used,memory.reserved,compute_mode,mig.mode.current,mig.mode.pending,driver_version --format=csv
sec compute-policy; nvidia-smi compute-policy -l; echo "rc=$?"
sec compute-policy-help; nvidia-smi compute-policy -h 2>&1 | head -40
sec which; command -v nvidia-cuda-mps-control nvidia-cuda-mps-server nvidia-smi nvcc; ls -l /usr/local/nvidia/bin 2>&1 | head; id
D=$(mktemp -d /tmp/mpsprobe.XXXXXX); chmod 700 "$D"; mkdir -m700 "$D/pipe" "$D/log"
export CUDA_MPS_PIPE_DIRECTORY=$D/pipe CUDA_MPS_LOG_DIRECTORY=$D/log
GPU=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
cleanup() { echo quit | nvidia-cuda-mps-control; sleep 2; pkill -f "$D" ; rm -rf "$D"; }
trap cleanup EXIT
sec mps-start; CUDA_VISIBLE_DEVICES=$GPU nvidia-cuda-mps-control -d; echo "rc=$?"; sleep 1
ls -la "$D/pipe" "$D/log"; cat "$D/pipe"/*.pid 2>/dev/null; ps -eo pid,ppid,user,args | grep -i mps | grep -v grep
c() { printf '%s\n' "$*" | nvidia-cuda-mps-control; echo "[rc=$?]"; }
sec cmds-empty
for cmd in get_server_list ps get_default_active_thread_percentage "get_default_device_pinned_mem_limit 0" "set_default_active_thread_percentage 25" get_default_active_thread_percentage "set_default_device_pinned_mem_limit 0 1G" "get_default_device_pinned_mem_limit 0" "set_default_client_priority 1" "get_default_client_priority" bogus_command; do echo "> $cmd"; c "$cmd"; done
sec client-torch
cat > "$D/t.py" <<'PY'
import torch, os, time, sys
p = torch.cuda.get_device_properties(0)
free, total = torch.cuda.mem_get_info()
print("sms_attr", p.multi_processor_count, "free", free, "total", total, "uuid", getattr(p, "uuid", None), flush=True)
try:
    x = torch.empty(int(sys.argv[1]) << 20, dtype=torch.uint8, device="cuda"); x.fill_(1); torch.cuda.synchronize(); print("alloc ok", sys.argv[1], flush=True)
except Exception as e:
    print("alloc failed", sys.argv[1], type(e).__name__, str(e)[:200], flush=True)
time.sleep(float(sys.argv[2]))
PY
CUDA_VISIBLE_DEVICES=$GPU python3 "$D/t.py" 512 6 & p1=$!
CUDA_VISIBLE_DEVICES=$GPU python3 "$D/t.py" 2048 6 & p2=$!
sleep 4
sec during-clients
for cmd in get_server_list ps; do echo "> $cmd"; c "$cmd"; done
S=$(echo get_server_list | nvidia-cuda-mps-control | head -1)
for cmd in "get_server_status $S" "get_client_list $S" "get_active_thread_percentage $S"; do echo "> $cmd"; c "$cmd"; done
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
nvidia-smi --query-gpu=memory.used --format=csv
wait $p1 $p2
sec per-client-env-cap
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=10 CUDA_VISIBLE_DEVICES=$GPU python3 "$D/t.py" 16 0
sec quit-with-client
CUDA_VISIBLE_DEVICES=$GPU python3 "$D/t.py" 16 8 & p3=$!
sleep 4; echo "> quit -t 2 (client running)"; t0=$(date +%s.%N); c "quit -t 2"; t1=$(date +%s.%N); echo "quit took $(echo "$t1 - $t0" | bc 2>/dev/null || python3 -c "print($t1-$t0)")"
sleep 3; ps -eo pid,args | grep -E 'mps|t.py' | grep -v grep; wait $p3; echo "client rc=$?"
sec logs; tail -n 30 "$D/log/control.log" "$D/log/server.log" 2>&1
sec no-mps-context-mem
CUDA_VISIBLE_DEVICES=$GPU python3 "$D/t.py" 16 3 & p4=$!; sleep 2.5
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv; wait $p4
sec mig-profiles-smi; nvidia-smi mig -lgip 2>&1 | head -30
sec 'done'
