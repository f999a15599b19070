/*
 * topology_internal.h: the geometry of a simulated GPU that the topology
 * parser and the MIG changes share (topology_geometry.c), so that a file can
 * never describe a machine the operations could not have built. Only
 * src/gpu/topology*.c include it.
 */
#ifndef GPUPACK_GPU_TOPOLOGY_INTERNAL_H
#define GPUPACK_GPU_TOPOLOGY_INTERNAL_H

#include <stddef.h>

#include "gpu/topology.h"

/* NVML_COMPUTE_INSTANCE_PROFILE_* of a CI spanning all slices of its GI; -1 none. */
int topo_ci_profile_index(int slices);

struct mig_profile *topo_profile_by_id(struct gpu_info *g, unsigned id);
struct mig_profile *topo_profile_by_name(struct gpu_info *g, const char *name);
struct mig_gi *topo_gi_by_id(struct gpu_info *g, unsigned id);
struct mig_ci *topo_ci_by_id(struct mig_gi *gi, unsigned id);
/* Is uuid used anywhere in the machine (GPU or MIG)? */
int topo_uuid_taken(const struct gpu_system *sys, const char *uuid);
/* "0+1,1+1,..." of a profile's placements. */
void topo_placements_str(const struct mig_profile *p, char *buf, size_t size);
/*
 * Can an instance of profile p go at placement pl on g? The checks the
 * driver makes: an allowed placement, no overlap, compute slices and the
 * profile's count left. Message without location; the caller adds it.
 */
int topo_gi_fits(const struct gpu_info *g, const struct mig_profile *p, const struct mig_placement *pl);
/* The lowest GPU-instance id not in use on g. */
unsigned topo_free_gi_id(const struct gpu_info *g);
void topo_gi_init(struct mig_gi *gi, unsigned id, const struct mig_profile *p,
    const struct mig_placement *pl);
void topo_ci_init(struct mig_ci *ci, unsigned id, const struct mig_gi *gi, const struct gpu_info *g,
    const struct mig_profile *p);

#endif
