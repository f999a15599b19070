#!/usr/bin/env python3
"""hold.py: a PyTorch task of bench/auto.sh's memory class.

    python3 bench/auto/hold.py SEED [SECONDS]

Imports torch (the start-up: CPU work), then holds a share of the GPU's
memory for SECONDS (default 2) while it multiplies matrices: from 3 to 22
GiB, by its seed ((SEED * 7) % 20 + 3 GiB: neighbours differ), the size in
the first tensor it allocates, as a training's parameters and activations
are. Prints one JSON line: its size and times.
"""
import json
import sys
import time

t0 = time.time()
import torch  # noqa: E402  (the import is the start-up)

seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
hold = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
gib = (seed * 7) % 20 + 3
dev = torch.device("cuda")
t1 = time.time()
block = torch.empty(gib << 28, dtype=torch.float32, device=dev)   # gib GiB
block.fill_(1.0)
a = torch.randn(4096, 4096, device=dev)
torch.cuda.synchronize()
t2 = time.time()
while time.time() - t2 < hold:
    a = torch.tanh(a @ a)
    torch.cuda.synchronize()
print(json.dumps({"seed": seed, "gib": gib, "import_s": round(t1 - t0, 3),
                  "alloc_s": round(t2 - t1, 3), "total_s": round(time.time() - t0, 3)}))
