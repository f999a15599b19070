# classes.sh: the farms of bench/auto.sh, one function each: CMD (the command
# template) and INPUTS (the values of ::: ). Sized for an H100 or H200 with
# 16 CPUs: each class's GPU work is a few seconds to a few tens of seconds,
# so that -j 1 (the slowest) stays affordable. $W is gpupack-work; the input
# ({}) of a gpupack-work task only names it (bench/auto/task drops it).
# shellcheck shell=bash disable=SC2034

# SGEMM n=512: 0.3 s of GPU each; several run at once under MPS (1.8x at 4 on an H100)
class_small() {
	CMD=("$PWD/bench/auto/task" {} "$W" matmul --n 512 --iters 20000)
	INPUTS=($(seq 40))
}

# SGEMM n=4096: one task alone keeps the GPU's SMs busy
class_large() {
	CMD=("$PWD/bench/auto/task" {} "$W" matmul --n 4096 --iters 150)
	INPUTS=($(seq 12))
}

# PyTorch trainings: ~10 s of start-up (import torch, the CUDA context), 0.4 s of GPU
class_python() {
	CMD=(python3 bench/auto/train.py)
	INPUTS=($(seq 20))
}

# each task holds a sixth of the device's memory for 1.5 s: five fit at once
class_memory() {
	local mib
	mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
	CMD=("$PWD/bench/auto/task" {} "$W" alloc --mib $((mib / 6)) --hold-ms 1500)
	INPUTS=($(seq 15))
}

# SGEMM n=4096 with 4 ms of CPU work after each iteration: CPU and GPU in turns
class_mixed() {
	CMD=("$PWD/bench/auto/task" {} "$W" matmul --n 4096 --iters 60 --cpu-ms 4)
	INPUTS=($(seq 24))
}

# SGEMM n=1024 of different lengths: most 1000-4000 iterations, every tenth 20000
class_hetero() {
	CMD=("$W" matmul --n 1024 --iters {})
	INPUTS=()
	for i in $(seq 32); do
		if [ $((i % 10)) -eq 3 ]; then INPUTS+=(20000); else INPUTS+=($((1000 + (i * 337) % 3000))); fi
	done
}
