/*
 * topology: a simulated machine as plain data, read from and written to the
 * topology format (doc/topology.md), and the MIG changes the driver would
 * allow on it, checked as the driver checks them. No file system here but
 * topo_load(): the parser works from memory so the fuzzer can drive it.
 */
#ifndef GPUPACK_GPU_TOPOLOGY_H
#define GPUPACK_GPU_TOPOLOGY_H

#include <stddef.h>

#include "gpu/backend.h"

#define TOPO_MAX_GPUS 64
#define TOPO_MAX_PROFILES 16
#define TOPO_MAX_GI 8
#define TOPO_MAX_FAIL 8
#define TOPO_MAX_PROCS 256
#define TOPO_MEM_SLICES 8

/* The mutating ops, as failure injection names them ("create-gi"). */
enum topo_op {
	TOPO_OP_SET_MIG_MODE,
	TOPO_OP_CREATE_GI,
	TOPO_OP_CREATE_CI,
	TOPO_OP_DESTROY_CI,
	TOPO_OP_DESTROY_GI,
	TOPO_NOPS,
};

/* "fail OP after N": calls 1..N of op succeed, call N+1 fails. */
struct topo_fail {
	int op;
	long after;
};

struct topo_util {
	unsigned gpu, mem; /* percent */
};

struct topology {
	struct gpu_system sys;  /* profiles and processes always filled */
	struct topo_util *util; /* one per GPU */
	int nfail;
	struct topo_fail fail[TOPO_MAX_FAIL];
};

/* Parse a topology from memory; name is used in "name:line: ..." messages. */
int topo_parse(const char *name, const char *buf, size_t len, struct topology *t);
/* Read and parse a file. A missing or unreadable file is EXIT_USAGE. */
int topo_load(const char *path, struct topology *t);
/* The canonical text of t (malloc'd, NUL-terminated); *len without the NUL. */
char *topo_format(const struct topology *t, size_t *len);
void topo_free(struct topology *t);

/* A copy of the machine as a snapshot shows it (profiles/processes per flags). */
void topo_snapshot(const struct topology *t, struct gpu_system *out, unsigned flags);

/* "create-gi" <-> TOPO_OP_CREATE_GI; -1 for an unknown name. */
int topo_op_parse(const char *name);
const char *topo_op_name(int op);

/* The deterministic MIG UUID of compute instance ci of gi on the GPU gpu_uuid. */
void topo_mig_uuid(const char *gpu_uuid, unsigned gi, unsigned ci, char *out, size_t size);

/*
 * The MIG changes, checked as the driver checks them (see doc/topology.md).
 * gpu is the driver index. 0, or -1 with err set (EXIT_USAGE for requests the
 * driver calls invalid, EXIT_ENV for instances in use); t unchanged on error.
 */
int topo_set_mig_mode(struct topology *t, int gpu, int enable);
int topo_create_gi(struct topology *t, int gpu, unsigned profile_id,
    const struct mig_placement *where, unsigned *gi_id);
int topo_create_ci(struct topology *t, int gpu, unsigned gi_id, unsigned *ci_id);
int topo_destroy_ci(struct topology *t, int gpu, unsigned gi_id, unsigned ci_id);
int topo_destroy_gi(struct topology *t, int gpu, unsigned gi_id);

#endif
