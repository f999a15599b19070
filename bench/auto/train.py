#!/usr/bin/env python3
"""train.py: a small PyTorch training, the start-up-bound task of bench/auto.sh.

    python3 bench/auto/train.py SEED [STEPS] [WIDTH] [fault]

Trains an MLP (WIDTH hidden units, default 2048) on random data for STEPS
steps (default 200) on the GPU, as the issue's example user does. Most of
its wall time is start-up: importing torch and making the CUDA context,
which is CPU work. Prints one JSON line: the phases' times in seconds and
the final loss. With "fault", or a SEED listed in $FAULT_SEEDS (comma
separated), it dies of a GPU fault after its set-up: an index out of
bounds on the GPU (a device-side assert, fatal to its CUDA context), as a
buggy training does.
"""
import os
import json
import sys
import time

t0 = time.time()
import torch  # noqa: E402  (the import is what is being timed)

t_import = time.time() - t0
seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
width = int(sys.argv[3]) if len(sys.argv) > 3 else 2048
torch.manual_seed(seed)
dev = torch.device("cuda")
t1 = time.time()
model = torch.nn.Sequential(
    torch.nn.Linear(1024, width), torch.nn.ReLU(),
    torch.nn.Linear(width, width), torch.nn.ReLU(),
    torch.nn.Linear(width, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(4096, 1024, device=dev)
y = torch.randint(0, 10, (4096,), device=dev)
torch.cuda.synchronize()
t_init = time.time() - t1
if (len(sys.argv) > 4 and sys.argv[4] == "fault") or \
        str(seed) in os.environ.get("FAULT_SEEDS", "").split(","):
    bad = torch.tensor([1 << 20], device=dev)
    x[0, 0] = y.float()[bad][0]     # device-side assert: index out of bounds
    torch.cuda.synchronize()
    sys.exit("train.py: the fault did not happen")
t2 = time.time()
for _ in range(steps):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
torch.cuda.synchronize()
t_gpu = time.time() - t2
print(json.dumps({"seed": seed, "steps": steps, "import_s": round(t_import, 3),
                  "init_s": round(t_init, 3), "train_s": round(t_gpu, 3),
                  "total_s": round(time.time() - t0, 3), "loss": float(loss)}))
