/*
 * ctxcost: what a CUDA context costs in device memory under each sharing
 * mechanism, in one place. A memory size given to gpupack (run --mem, mps
 * --mem) means what the user's program itself may allocate; each mechanism
 * adds its own context cost from here, measured on the lent cards:
 *
 *  - CTX_PACK_MEM: what to set aside per task when packing tasks onto a
 *    device (run). Measured on the H200 (driver 580.159.04, CUDA 13.0,
 *    2026-11-22): 527 MiB for a context that allocated nothing (gpupack-work
 *    info; nvidia-smi showed 520 MiB), 591 MiB under MPS counting the
 *    server's share; 600 MiB leaves room for cuBLAS's workspace.
 *  - MPS_CONTEXT_RESERVE: what a client's own context takes out of its MPS
 *    pinned-memory limit before it allocates anything. Measured on the H200
 *    (tests/gpu/mps-mem.sh): 513 MiB with all 132 SMs, 271 MiB at 50 %, 145
 *    MiB at 25 % (about 22 MiB + 3.7 MiB per SM); with a plain 1G limit a
 *    client could allocate 448 MiB but not 512. The limit given to MPS for
 *    --mem SIZE is SIZE plus this (the full-SM figure, rounded up: on
 *    smaller devices or under an SM cap the client gets a little more).
 *  - MPS_SERVER_MEM: the MPS server's own memory, once per device: 66 MiB on
 *    the H200 with 0, 1 and 4 clients (bench/results/2026-11-22-mps-h200.md).
 *  - MIG_CONTEXT_RESERVE: what `mig plan` adds to a job's MEMORY for its
 *    context in a MIG instance. The whole H200's figure (527 MiB for a
 *    context that allocated nothing, 513 MiB as an MPS client), rounded up:
 *    a context on a slice is smaller (about 22 MiB plus 3.7 MiB per SM, some
 *    80 MiB on a 16-SM 1g), but no slice could be measured (the lent card's
 *    MIG mode may not be changed), so this upper bound is used everywhere:
 *    a job never gets too little. doc/mig.md says the same.
 *
 * doc/run.md, doc/mps.md and doc/mig.md quote these figures; change them here.
 */
#ifndef GPUPACK_SHARE_CTXCOST_H
#define GPUPACK_SHARE_CTXCOST_H

#include "util/units.h"

#define CTX_PACK_MEM          MIB(600)
#define MPS_CONTEXT_RESERVE   MIB(520)
#define MPS_SERVER_MEM        MIB(66)
#define MIG_CONTEXT_RESERVE   ((uint64_t)MIB(528))

#endif
