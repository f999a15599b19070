/*
 * gpuprint: the tables of backend structs that several commands print,
 * written once so that `devices --profiles` and `mig profiles` show the
 * same columns (gpujson.h does the same for their JSON).
 */
#ifndef GPUPACK_CMD_GPUPRINT_H
#define GPUPACK_CMD_GPUPRINT_H

#include <stdio.h>

#include "gpu/backend.h"

/*
 * A GPU's MIG profiles: a title line (index, UUID, name, MIG mode), then
 * PROFILE ID INDEX SLICES MEMORY SMS MAX CE PLACEMENTS, indented by two.
 * A GPU without profiles gets the title line and why there are none.
 */
void print_mig_profiles(FILE *f, const struct gpu_info *g);

#endif
