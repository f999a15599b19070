/*
 * knob: the test-only switches and counters, by name, in one table (Redis's
 * DEBUG config is the model). A switch changes what the code does so that a
 * test can see one part alone; a counter says how often something happened
 * over the process. Nothing a user needs is a knob, and no knob changes a
 * result a user is shown as proven.
 *
 * A test sets them with knob_set() (or knob_put() by id); any program reads
 * GPUPACK_KNOBS="name=value,name=value" from its environment once, at the
 * first knob read, so that a CLI test can reach the ones inside gpupack.
 * `gpupack --knobs` lists them with their values and what each is for.
 *
 * Adding one: an id below, a row in knob.c's table (name, what it is for),
 * then knob(KNOB_X) where the code reads it. Reads and writes are atomic:
 * the planner's thread reads switches and counts beside the caller's.
 */
#ifndef GPUPACK_UTIL_KNOB_H
#define GPUPACK_UTIL_KNOB_H

#include <stdio.h>

enum knob_id {
	KNOB_MIG_LP_FAIL_FROM,  /* the planner's simplex fails from this call on */
	KNOB_MIG_BAGS_OFF,      /* the planner's bags left out */
	KNOB_MIG_BAGS_BLIND,    /* the bags blind to the best plan so far */
	KNOB_MIG_BAG_PROOFS,    /* counter: plans the bags proved optimal */
	KNOB_MIG_BAG_UNITS,     /* counter: plans of one unit more the bags found */
	KNOB_FARM_FAULT_RESTART, /* seconds a server may stay in FAULT before its restart */
	KNOB_FARM_FAULT_HANG,   /* seconds without CPU after which a client beside a fault counts as hung */
	KNOB_FARM_FAULT_GRACE,  /* seconds a control daemon may stay silent after a fault before its restart */
	KNOB_FARM_START_OVER,   /* percent of the CPUs that tasks starting together may want (-1: any) */
	KNOB_FARM_CPU_ROOM,     /* percent of the CPUs the tasks may want before the count stops rising */
	KNOB_FARM_BLIND_AFTER,  /* seconds after the farm's work shows with none of its tasks listed: blind */
	KNOB_FARM_USAGE_OFF,    /* the per-task usage sampler reads no driver (a GPU experiment's other arm) */
	KNOB_N
};

/* The knob's value (0 unless set). */
long knob(enum knob_id id);
/* Set one by id. */
void knob_put(enum knob_id id, long value);
/* Add to a counter; returns the new value. */
long knob_add(enum knob_id id, long n);
/* Set one by name: 0, or -1 (err set, EXIT_USAGE) when there is no such knob. */
int knob_set(const char *name, long value);
/* "name=value,..." (GPUPACK_KNOBS' form): 0, or -1 with err set; nothing set on error. */
int knob_parse(const char *spec);
/* Every knob back to 0 (the environment is not read again). */
void knob_reset(void);
/* One line per knob: name, value, what it is for. */
void knob_list(FILE *out);
const char *knob_name(enum knob_id id);

#endif
