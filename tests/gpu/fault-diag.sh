#!/bin/bash
# fault-diag.sh: bench/auto.sh's fault class by hand, with what MPS says while it runs
exec 2>&1
echo "== system MPS (default pipe dir)"; ls -la /tmp/nvidia-mps 2>&1 | head; echo get_server_list | timeout 5 nvidia-cuda-mps-control
for s in $(echo get_server_list | timeout 5 nvidia-cuda-mps-control); do echo "server $s: $(echo get_server_status $s | timeout 5 nvidia-cuda-mps-control)"; done
tail -5 /var/log/nvidia-mps/server.log 2>&1; tail -5 /var/log/nvidia-mps/control.log 2>&1
make -j16 build/gpupack >/dev/null 2>&1 || echo build failed
S=$(mktemp -d /tmp/fd.XXXX); chmod 700 "$S"
( export GPUPACK_STATE_DIR=$S/st FAULT_SEEDS=5,11; exec timeout -k 5 110 build/gpupack run --json --joblog "$S/jl" python3 bench/auto/train.py ::: $(seq 16) >"$S/out" 2>"$S/err" ) &
farm=$!
sleep 40
echo "== at 40 s"; cat "$S/jl"
find "$S/st" -maxdepth 4 | head -30
for p in "$S"/st/mps/*/pipe; do [ -d "$p" ] || continue; echo "== ours $p"
  echo get_server_list | CUDA_MPS_PIPE_DIRECTORY=$p timeout 5 nvidia-cuda-mps-control
  for s in $(echo get_server_list | CUDA_MPS_PIPE_DIRECTORY=$p timeout 5 nvidia-cuda-mps-control); do echo "server $s: $(echo get_server_status $s | CUDA_MPS_PIPE_DIRECTORY=$p timeout 5 nvidia-cuda-mps-control)"; echo "ps:"; echo ps | CUDA_MPS_PIPE_DIRECTORY=$p timeout 5 nvidia-cuda-mps-control; done; done
for l in "$S"/st/mps/*/log; do [ -d "$l" ] || continue; echo "== $l"; tail -15 "$l/control.log"; tail -15 "$l/server.log"; done
echo "== system MPS at 40 s"; for s in $(echo get_server_list | timeout 5 nvidia-cuda-mps-control); do echo "server $s: $(echo get_server_status $s | timeout 5 nvidia-cuda-mps-control)"; done
for pid in $(pgrep -x python3); do echo "task $pid: $(tr '\0' ' ' </proc/$pid/cmdline | cut -c1-80) wchan=$(cat /proc/$pid/wchan) $(grep -E '^State' /proc/$pid/status) pipe=$(tr '\0' '\n' </proc/$pid/environ | grep CUDA_MPS_PIPE) cvd=$(tr '\0' '\n' </proc/$pid/environ | grep CUDA_VISIBLE)"; done
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
wait $farm; echo "farm rc=$?"
cat "$S/jl"; grep -v -E 'UserWarning|Consider using|"total_s": round|^\{"seed"' "$S/err" | tail -30; tail -2 "$S/out" | cut -c1-600
pgrep -x python3 | xargs -r kill -9
echo "left: $(pgrep -c -x python3) python, gpupack $(pgrep -c -x gpupack)"; ps -eo pid,etimes,args | grep -E 'mps' | grep -v grep
