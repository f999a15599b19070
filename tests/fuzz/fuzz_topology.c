/*
 * fuzz_topology: libFuzzer harness for the topology parser (src/gpu/topology_parse.c).
 * Any input must be parsed or refused with an error, never crash or leak;
 * what parses must survive the canonical writer (write, parse, write gives
 * the same text), and the MIG changes must keep the machine valid.
 *   make fuzz && make fuzz-run FUZZ=fuzz_topology FUZZ_SECONDS=600
 */
#include "gpu/topology.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Canonical text must parse back to itself; anything else is a writer or parser bug. */
static void
round_trip(const struct topology *t)
{
	struct topology u;
	size_t len;
	char *a = topo_format(t, &len), *b;

	if (topo_parse("canonical", a, len, &u) < 0) {
		fprintf(stderr, "canonical form refused: %s\n---\n%s---\n", err_msg(), a);
		abort();
	}
	b = topo_format(&u, NULL);
	if (strcmp(a, b) != 0) {
		fprintf(stderr, "canonical form not stable\n---\n%s---\n%s---\n", a, b);
		abort();
	}
	free(a);
	free(b);
	topo_free(&u);
}

/* Every change the backend offers, on every GPU; the result must still round-trip. */
static void
changes(struct topology *t)
{
	for (int g = 0; g < t->sys.ngpus; g++) {
		struct gpu_info *gpu = &t->sys.gpus[g];
		unsigned id, ci;

		topo_set_mig_mode(t, g, 1);
		for (int p = 0; p < gpu->nprofiles; p++) {
			unsigned pid = gpu->profiles[p].id;

			if (topo_create_gi(t, g, pid, NULL, &id) == 0)
				topo_create_ci(t, g, id, &ci);
			if (gpu->profiles[p].nplacements)
				topo_create_gi(t, g, pid, &gpu->profiles[p].placements[0], &id);
		}
		if (gpu->ngi) {
			unsigned gid = gpu->gi[0].id;

			if (gpu->gi[0].nci)
				topo_destroy_ci(t, g, gid, gpu->gi[0].ci[0].id);
			topo_destroy_gi(t, g, gid);
		}
		topo_set_mig_mode(t, g, 0);
	}
	round_trip(t);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct topology t;

	err_clear();
	if (topo_parse("fuzz", (const char *)data, size, &t) < 0) {
		if (err_code() != EXIT_USAGE || strncmp(err_msg(), "fuzz:", 5) != 0) {
			fprintf(stderr, "refusal without file:line or exit 2: %d %s\n", err_code(), err_msg());
			abort();
		}
		return 0;
	}
	round_trip(&t);
	changes(&t);
	topo_free(&t);
	return 0;
}
