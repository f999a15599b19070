#!/bin/sh
# probe.sh: one task of a test job. Prints what it was given (its rank, its
# devices, its MPS pipe directory) and what it got as a client of the MPS
# double ($PROBE_CLIENT: the client's line with its limits and the daemon's
# devices), holding on for ${PROBE_MS:-300} ms. With PROBE_OUT=DIR the same
# two lines also go to DIR/task-<job>.<step>.<rank>, and its pid to .pid.
line="task=${SLURM_PROCID:-?} node=${SLURMD_NODENAME:-?} cvd=${CUDA_VISIBLE_DEVICES:-} pipe=${CUDA_MPS_PIPE_DIRECTORY:-} mpsdir=${GPUPACK_MPS_DIR:-}"
f=${PROBE_OUT:+$PROBE_OUT/task-${SLURM_JOB_ID}.${SLURM_STEP_ID:-b}.${SLURM_PROCID:-0}}
[ -n "$f" ] && echo $$ >"$f.pid"
client=$("$PROBE_CLIENT" --ms "${PROBE_MS:-300}" 2>&1)
printf '%s\nclient task=%s %s\n' "$line" "${SLURM_PROCID:-?}" "$client"
[ -n "$f" ] && printf '%s\nclient %s\n' "$line" "$client" >"$f"
exit 0
