/*
 * perl: GNU parallel's perl replacement strings ({= expression =}, --rpl,
 * --plus's strings) evaluated by perl itself, as parallel evaluates them:
 * one perl process per run, started on the first such string, given each
 * expression once to compile and then each value to run it on. Its
 * functions are parallel's: Q() pQ() uq() skip() seq() slot() total_jobs()
 * hash() and the date ones, $job->seq(), $job->slot(), @arg (the task's
 * values, $arg[1] the first). No perl on PATH: the run is refused.
 */
#ifndef GPUPACK_FARM_PERL_H
#define GPUPACK_FARM_PERL_H

#include <stddef.h>
#include <sys/types.h>

#include "util/str.h"

struct perl {
	pid_t pid;
	int to, from;         /* its stdin, its stdout */
	int ncode;            /* expressions compiled: ids 0..ncode-1 */
	unsigned long long job_seq; /* the task perl has as $job now (0: none) */
	int job_slot;
	char rbuf[4096];      /* what was read from it and not used yet */
	size_t rlen, roff;
};

/* The value's flags: uq() was called (insert it unquoted), skip() was called (skip the task). */
enum { PERL_UQ = 1, PERL_SKIP = 2 };

/* Start perl. -1 with err set (EXIT_USAGE: no perl on PATH). */
int perl_open(struct perl *p, int max_jobs_running);
/* Compile an expression; its id, or -1 with err set (EXIT_USAGE: not perl). */
int perl_compile(struct perl *p, const char *code);
/*
 * The task the next evaluations are for: its seq, slot, the task count
 * (total_jobs(); 0 unknown) and its values (@arg; under -N0 each is
 * PERL_NOARG, as parallel's). Evaluations are kept per value and expression
 * until the next task, as parallel keeps them.
 */
int perl_job(struct perl *p, unsigned long long seq, int slot, unsigned long long total,
    char *const *args, int nargs, int noarg);
/* Run expression id with $_ = val (len bytes; the task's value number argno, for the cache): out, *flags. */
int perl_eval(struct perl *p, int id, int argno, const char *val, size_t len, struct sbuf *out,
    int *flags);
/* GNU parallel's value under -N0: what a perl expression sees, and where its result is it, nothing. */
#define PERL_NOARG "\0noarg"
#define PERL_NOARG_LEN 6
/* --filter: perl's eval of code (the task's values already in it) is true? -1 with err set. */
int perl_test(struct perl *p, const char *code, int *truth);
/* The most (groups) of a replacement string perl_match reports (and the whole match, [0]). */
#define PERL_GROUPS 10
/* Does perl's regex re match text? 1: m[0] the match, m[1..] its groups ({-1, -1}: none); 0 no; -1 err. */
int perl_match(struct perl *p, const char *re, const char *text, long m[PERL_GROUPS][2]);
/* End perl (its stdin closed: it exits) and wait for it. */
void perl_close(struct perl *p);

#endif
