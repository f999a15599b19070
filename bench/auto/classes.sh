# classes.sh: the farms of bench/auto.sh, one function each, sized by the
# GPUs of the machine ($NGPU) so that each run takes 5 to 25 s on H100s: CMD (the command template), INPUTS (the values of :::),
# FAILS (tasks that fail whatever the count: the fault class's) and WHAT
# (one line for the report). $W is gpupack-work; a gpupack-work task's
# input ({}) only names it (bench/auto/task drops it).
# Under FAKE=1 (bench/auto.sh's own test, no GPU) each class is fake-work's
# farm task on a simulated device instead (fake_config sets the device).
# shellcheck shell=bash disable=SC2034,SC2207

# start-up-bound PyTorch trainings: ~6-10 s of CPU each (import torch, the CUDA context), 0.4 s
# of GPU: about one per core is best (16 on one H100 with 16 cores)
class_python() {
	WHAT="PyTorch trainings (bench/auto/train.py), start-up bound"
	CMD=(python3 bench/auto/train.py)
	INPUTS=($(seq $((${PYN:-16} * NGPU))))
	FAILS=0
	fake_config python start_ms=3000 start_cpu=1 gpu_cpu=0.2 curve=1:1,8:2 task_mib=1100 \
	    "--work 0.2"
}

# PyTorch tasks holding 3-22 GiB each (bench/auto/hold.py), 1.5 s of GPU work: memory bounds the
# count. Ten per 80 GiB of the GPU's memory (10 on an H100, 17 on an H200: there ten all fit at once,
# and nothing would bound the count)
class_memory() {
	local mib
	mib=$([ "${FAKE:-0}" = 1 ] && echo 81559 || nvidia-smi -i "${CUDA_VISIBLE_DEVICES:-0}" \
	    --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -1)
	WHAT="PyTorch tasks holding 3-22 GiB each for 1.5 s (bench/auto/hold.py)"
	CMD=(python3 bench/auto/hold.py {} 1.5)
	INPUTS=($(seq $((${MEMN:-$(((${mib:-81559} * 10 + 40960) / 81920))} * NGPU))))
	FAILS=0
	fake_config memory start_ms=2000 start_cpu=1 gpu_cpu=0.2 curve=1:1,4:2 task_mib=20000 \
	    "--work 0.5"
}

# SGEMM n=4096 (gpupack-work): one task alone keeps the GPU's SMs busy
class_gpu() {
	WHAT="SGEMM n=4096 (gpupack-work): GPU-bound, one task fills the GPU"
	CMD=("$PWD/bench/auto/task" {} "$W" matmul --n 4096 --iters 150)
	INPUTS=($(seq $((12 * NGPU))))
	FAILS=0
	fake_config gpu start_ms=200 start_cpu=0.3 gpu_cpu=0.1 curve=1:1 sm=1:0.97 task_mib=800 "--work 0.4"
}

# PyTorch trainings, two of which die of a GPU fault (a device-side assert) after their set-up
class_fault() {
	WHAT="PyTorch trainings, two of which die of a GPU fault (device-side assert)"
	CMD=(python3 bench/auto/train.py)
	INPUTS=($(seq $((16 * NGPU))))
	# two seeds a third and two thirds in: they fault beside others, in the farm's middle
	FAULT_SEEDS="$((5 * NGPU)),$((11 * NGPU))"
	FAILS=2
	fake_config fault start_ms=3000 start_cpu=1 gpu_cpu=0.2 curve=1:1,8:2 task_mib=1100 "--work 0.2"
}

# phases: SGEMM n=1024 tasks (GPU-bound, small kernels: a few at once), then PyTorch trainings
# (start-up bound: one per core); no one fixed count suits both
class_phases() {
	local i
	WHAT="phases: SGEMM n=1024 (gpupack-work), then PyTorch trainings"
	CMD=("$PWD/bench/auto/phase" {})
	INPUTS=()
	for i in $(seq $((12 * ${PHN:-1} * NGPU))); do INPUTS+=("s$i"); done
	for i in $(seq $((8 * ${PHN:-1} * NGPU))); do INPUTS+=("p$i"); done
	FAILS=0
	fake_config phases start_ms=1500 start_cpu=1 gpu_cpu=0.2 curve=1:1,4:3,16:2 task_mib=900 "--work 0.3"
}

# fake_config NAME KEY=VALUE... "--work W": under FAKE=1, the class on a simulated device
fake_config() {
	local name=$1
	shift
	[ "${FAKE:-0}" = 1 ] || return 0
	mkdir -p "$FAKE_DIR/$name/proc"
	printf '%s\n' "ncpu=$NCPU" "dev_mib=81559" "${@:1:$#-1}" >"$FAKE_DIR/$name/config"
	FAKE_DEVICE_DIR=$FAKE_DIR/$name
	FAKE_ARGS=${*: -1}
	CMD=("$FAKE_TASK" {})
}
