/*
 * joblog: --joblog read once into the description every part of the farm
 * uses (farm/joblog.h): the file, append, stdout, the shard's name, and
 * the paths of the files beside it.
 */
#include "farm/joblog.h"
#include "util/err.h"
#include "util/str.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define SHARD "{shard}"

int
joblog_check_name(const char *arg)
{
	if (!arg[0] || (arg[0] == '+' && !arg[1]))
		return err_set(EXIT_USAGE, "--joblog: empty file name");
	return 0;
}

/* name with each {shard} replaced by k (malloc'd). */
static char *
replace_shard(const char *name, unsigned long k)
{
	struct sbuf b;
	const char *at;

	sbuf_init(&b);
	for (const char *p = name; *p; p = at + strlen(SHARD)) {
		at = strstr(p, SHARD);
		if (!at) {
			sbuf_add(&b, p);
			break;
		}
		sbuf_addn(&b, p, (size_t)(at - p));
		sbuf_printf(&b, "%lu", k);
	}
	return sbuf_detach(&b);
}

/* The directory of path as written: what precedes its last '/', "/" at the root, "." for none. */
static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	return xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
}

/* FILE is d->path: the side files beside it. 0, or -1 with err set (and d none) when they cannot be named. */
static int
name_sides(struct joblog_desc *d, const char *shown)
{
	size_t len = strlen(d->path), most = PATH_MAX - 1 - strlen(JOBLOG_LONGEST_SIDE);

	if (len > most) {
		err_set(EXIT_USAGE, "--joblog '%.40s...': path too long (%zu bytes; at most %zu, so that "
		    "FILE%s beside it fits in PATH_MAX)", shown, len, most, JOBLOG_LONGEST_SIDE);
		joblog_free(d);
		return -1;
	}
	d->kind = JOBLOG_FILE;
	d->dir = dir_of(d->path);
	d->identity = xasprintf("%s.gpupack", d->path);
	d->lock = xasprintf("%s.lock", d->path);
	d->farm = xasprintf("%s.farm", d->path);
	return 0;
}

int
joblog_describe(struct joblog_desc *d, const char *arg, unsigned long shard_k, unsigned long shard_n)
{
	const char *name;

	*d = (struct joblog_desc){.kind = JOBLOG_NONE};
	if (!arg)
		return 0;
	if (joblog_check_name(arg) < 0)
		return -1;
	d->append = arg[0] == '+';
	name = arg + d->append;
	d->sharded = strstr(name, SHARD) != NULL;
	if (d->sharded && shard_n == 0) {
		err_set(EXIT_USAGE, "--joblog '%s': {shard} without --shard", name);
		joblog_free(d);
		return -1;
	}
	d->path = d->sharded ? replace_shard(name, shard_k) : xstrdup(name);
	/* GNU parallel's --joblog -: the header at the start, each record after its task's output */
	if (strcmp(d->path, "-") == 0) {
		d->kind = JOBLOG_STDOUT;
		return 0;
	}
	return name_sides(d, name);
}

int
joblog_of_file(struct joblog_desc *d, const char *path)
{
	*d = (struct joblog_desc){.kind = JOBLOG_NONE, .path = xstrdup(path)};
	return name_sides(d, path);
}

int
joblog_is_file(const struct joblog_desc *d)
{
	return d->kind == JOBLOG_FILE;
}

void
joblog_free(struct joblog_desc *d)
{
	free(d->path);
	free(d->dir);
	free(d->identity);
	free(d->lock);
	free(d->farm);
	*d = (struct joblog_desc){.kind = JOBLOG_NONE};
}
