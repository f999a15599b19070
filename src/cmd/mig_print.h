/*
 * mig_print: a MIG plan as `mig plan` prints it (src/cmd/mig.c): tables (the
 * instances of each GPU, then where each request unit goes and why some go
 * nowhere, with the verdict on optimality) or one JSON object (doc/mig.md).
 */
#ifndef GPUPACK_CMD_MIG_PRINT_H
#define GPUPACK_CMD_MIG_PRINT_H

#include "share/mig.h"

/* The plan p of requests reqs on gpus, with the operations that apply it, as one JSON object. */
void mig_print_plan_json(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    const struct mig_plan *p, const struct mig_op *ops, int nops);
/* The same as tables. */
void mig_print_plan_table(const struct mig_gpu *gpus, int ngpus, const struct mig_request *reqs, int nreqs,
    const struct mig_plan *p);

#endif
