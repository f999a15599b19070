/*
 * simfs: the shared directory of farmsim, in memory, behind the file calls
 * the farm's coordination code makes (the link wraps them: -Wl,--wrap).
 * Paths under /sim are its; every other path goes to the real call.
 *
 * One server holds the truth; each simulated node is a client that sees it
 * through what a network filesystem may do (simfs_opts): names and
 * attributes cached for ttl seconds (positive and negative), open(2)
 * without close-to-open revalidation, appends visible to other clients only
 * append_delay seconds after they were written (fsync or not), and locks
 * that do not reach across clients. Time is the simulation's (simfs_now).
 *
 * It counts what a metadata server would see (simfs_server) apart from the
 * calls the clients made (simfs_calls): a cached answer is a call, not a
 * server operation.
 */
#ifndef FARMSIM_SIMFS_H
#define FARMSIM_SIMFS_H

#include <stddef.h>

struct simfs_opts {
	double ttl;           /* name and attribute cache, seconds; 0: none */
	int nocto;            /* open(2) trusts the attribute cache (no close-to-open) */
	double append_delay;  /* seconds before another client sees appended bytes */
	int nolocks;          /* locks do not reach across clients: every node takes them */
};

struct simfs_count {
	unsigned long long create, exists, lookup, getattr, setattr, readdir, rename, remove, sync;
	unsigned long long read, write, bytes;
	unsigned long long cached;    /* answered from a client's cache */
};

extern struct simfs_count simfs_server, simfs_calls;

void simfs_init(const struct simfs_opts *o, int nclients);
void simfs_client(int c);
void simfs_now(double t);
/* Metadata operations the server saw (all but read, write, cached; exists is part of create). */
unsigned long long simfs_meta(const struct simfs_count *c);
/* The server's bytes of path (no client's view); -1 when it is not a file. */
int simfs_peek(const char *path, const char **data, size_t *len);
/* Names the server holds (files, links, directories). */
unsigned long long simfs_names(void);

#endif
