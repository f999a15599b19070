
# ---- a command that sets CUDA_VISIBLE_DEVICES itself: warned once ------------------------------
X8="$GPUPACK --sim $TOPO/h100-80gb-x8.topo"
run $X8 run -j 1 'CUDA_VISIBLE_DEVICES=$(( ({%}-1) % 4 )) sh -c "echo {} \$CUDA_VISIBLE_DEVICES"' ::: 1 2 3
is "$rc" 0 "a kept CUDA_VISIBLE_DEVICES prefix: the run goes on"
is "$(printf '%s\n' "$err" | grep -c 'sets CUDA_VISIBLE_DEVICES itself')" 1 "warned once, not per task"
like "$err" "^gpupack: run: warning: the command sets CUDA_VISIBLE_DEVICES itself, which overrides the GPU gpupack places each task on" \
    "saying what it overrides"
run $X8 run env CUDA_VISIBLE_DEVICES=0 true ::: 1 2
is "$(printf '%s\n' "$err" | grep -c 'sets CUDA_VISIBLE_DEVICES itself')" 1 "env CUDA_VISIBLE_DEVICES=0 too"
run $X8 run 'echo $CUDA_VISIBLE_DEVICES ${CUDA_VISIBLE_DEVICES}' ::: 1
is "$err" "" "reading it is not setting it: no warning"
