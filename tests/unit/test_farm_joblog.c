/* test_farm_joblog: --joblog described once: '+', {shard}, '-', directories, side files, length. */
#include "tap.h"
#include "farm/joblock.h"
#include "farm/joblog.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/test_farm_joblog.XXXXXX";

/* d is a file at path in dirname, with its side files beside it. */
static void
is_file(const struct joblog_desc *d, const char *path, const char *dirname, const char *what)
{
	char *side;

	ok(d->kind == JOBLOG_FILE && joblog_is_file(d), "%s: a file", what);
	is_str(d->path, path, "%s: its path", what);
	is_str(d->dir, dirname, "%s: its directory", what);
	side = xasprintf("%s.gpupack", path);
	is_str(d->identity, side, "%s: FILE.gpupack beside it", what);
	free(side);
	side = xasprintf("%s.lock", path);
	is_str(d->lock, side, "%s: FILE.lock beside it", what);
	free(side);
	side = xasprintf("%s.farm", path);
	is_str(d->farm, side, "%s: FILE.farm beside it", what);
	free(side);
}

/* Refused: -1, a usage error, one line holding want, and nothing described. */
static void
refused(int rc, const struct joblog_desc *d, const char *want, const char *what)
{
	ok(rc < 0 && err_code() == EXIT_USAGE, "%s: refused as a usage error", what);
	ok(strstr(err_msg(), want) != NULL && strchr(err_msg(), '\n') == NULL, "%s: one line saying '%s'",
	    what, want);
	if (!strstr(err_msg(), want))
		printf("#   said: %s\n", err_msg());
	ok(d->kind == JOBLOG_NONE && !d->path && !d->dir && !d->identity && !d->lock && !d->farm,
	    "%s: nothing described", what);
	err_clear();
}

static void
test_plain(void)
{
	struct joblog_desc d;

	ok(joblog_describe(&d, NULL, 0, 0) == 0 && d.kind == JOBLOG_NONE && !d.path && !joblog_is_file(&d),
	    "no --joblog: none");
	ok(joblog_describe(&d, "runs.log", 0, 0) == 0 && !d.append && !d.sharded, "a relative name");
	is_file(&d, "runs.log", ".", "runs.log");
	joblog_free(&d);
	ok(d.kind == JOBLOG_NONE && !d.path && !d.farm, "freed: none again");
	ok(joblog_describe(&d, "+runs.log", 0, 0) == 0 && d.append, "+FILE appends");
	is_file(&d, "runs.log", ".", "+runs.log: the '+' is no part of the name");
	joblog_free(&d);
	ok(joblog_describe(&d, "logs/a/runs.log", 0, 0) == 0, "a relative path");
	is_file(&d, "logs/a/runs.log", "logs/a", "logs/a/runs.log");
	joblog_free(&d);
	ok(joblog_describe(&d, "/scratch/u/runs.log", 0, 0) == 0, "an absolute path");
	is_file(&d, "/scratch/u/runs.log", "/scratch/u", "/scratch/u/runs.log");
	joblog_free(&d);
	ok(joblog_describe(&d, "/runs.log", 0, 0) == 0, "a file at the root");
	is_file(&d, "/runs.log", "/", "/runs.log");
	joblog_free(&d);
	ok(joblog_describe(&d, "./-", 0, 0) == 0, "./- is a file named -");
	is_file(&d, "./-", ".", "./-");
	joblog_free(&d);
}

static void
test_stdout(void)
{
	struct joblog_desc d;

	ok(joblog_describe(&d, "-", 0, 0) == 0 && d.kind == JOBLOG_STDOUT && !joblog_is_file(&d) &&
	    !d.append, "-: stdout");
	ok(d.path && strcmp(d.path, "-") == 0, "-: named - in messages");
	ok(!d.dir && !d.identity && !d.lock && !d.farm, "-: no file beside it");
	joblog_free(&d);
	ok(joblog_describe(&d, "+-", 0, 0) == 0 && d.kind == JOBLOG_STDOUT && d.append, "+-: stdout too");
	joblog_free(&d);
	ok(joblog_describe(&d, "-", 2, 4) == 0 && d.kind == JOBLOG_STDOUT && !d.sharded, "-: under --shard too");
	joblog_free(&d);
}

static void
test_shard(void)
{
	struct joblog_desc d;

	ok(joblog_describe(&d, "runs.{shard}.log", 3, 8) == 0 && d.sharded && !d.append, "{shard} by K");
	is_file(&d, "runs.3.log", ".", "runs.{shard}.log as shard 3");
	joblog_free(&d);
	ok(joblog_describe(&d, "+s{shard}/runs.{shard}", 0, 2) == 0 && d.sharded && d.append,
	    "+ and {shard} twice");
	is_file(&d, "s0/runs.0", "s0", "+s{shard}/runs.{shard} as shard 0");
	joblog_free(&d);
	ok(joblog_describe(&d, "runs.log", 1, 2) == 0 && !d.sharded, "--shard without {shard}: one joblog");
	is_file(&d, "runs.log", ".", "runs.log under --shard");
	joblog_free(&d);
	refused(joblog_describe(&d, "+runs.{shard}.log", 0, 0), &d,
	    "--joblog 'runs.{shard}.log': {shard} without --shard", "{shard} without --shard");
}

static void
test_refused(void)
{
	struct joblog_desc d;
	size_t most = PATH_MAX - 1 - strlen(JOBLOG_LONGEST_SIDE);
	char *name = xcalloc(1, most + 2);

	refused(joblog_describe(&d, "", 0, 0), &d, "--joblog: empty file name", "an empty name");
	refused(joblog_describe(&d, "+", 0, 0), &d, "--joblog: empty file name", "+ alone");
	ok(joblog_check_name("+") < 0 && joblog_check_name("") < 0 && joblog_check_name("x") == 0 &&
	    joblog_check_name("+x") == 0 && joblog_check_name("-") == 0, "names checked as they are read");
	err_clear();
	memset(name, 'j', most);
	ok(joblog_describe(&d, name, 0, 0) == 0 && strlen(d.identity) == PATH_MAX - 1,
	    "the longest path: FILE.gpupack just fits in PATH_MAX");
	joblog_free(&d);
	name[0] = '/';
	name[most] = 'j';
	refused(joblog_describe(&d, name, 0, 0), &d, "path too long", "a byte longer");
	/* what is checked is the name with K in it */
	memcpy(name + most - 8, "{shard}", 7);
	name[most - 1] = '\0';
	ok(joblog_describe(&d, name, 12, 13) == 0, "{shard} as K of two digits still fits");
	joblog_free(&d);
	refused(joblog_describe(&d, name, 123456789, 999999999), &d, "path too long", "K of nine digits does not");
	free(name);
}

/* A file gpupack names itself: taken as it is ('+' and {shard} are part of it). */
static void
test_of_file(void)
{
	struct joblog_desc d;

	ok(joblog_of_file(&d, "+runs.{shard}.farm/r/log/n") == 0 && !d.append && !d.sharded, "a file gpupack names");
	is_file(&d, "+runs.{shard}.farm/r/log/n", "+runs.{shard}.farm/r/log", "its own log");
	joblog_free(&d);
}

/* The lock's message file is the one the description names. */
static void
test_lock_side(void)
{
	struct joblog_desc d;
	struct joblock l;
	char *arg = xasprintf("+%s/runs.{shard}.log", dir);

	ok(joblog_describe(&d, arg, 1, 2) == 0, "describe a joblog in the scratch directory");
	ok(joblock_take(&l, &d, "shards.2", 1) == 0 && l.first, "take its lock");
	ok(access(d.path, F_OK) == 0 && access(d.lock, F_OK) == 0, "the joblog and FILE.lock are where described");
	joblock_release(&l);
	ok(access(d.lock, F_OK) < 0, "the last member out removes FILE.lock");
	ok(access(d.path, F_OK) == 0, "and keeps the joblog");
	joblog_free(&d);
	free(arg);
}

int
main(void)
{
	ok(mkdtemp(dir) != NULL, "scratch directory");
	test_plain();
	test_stdout();
	test_shard();
	test_refused();
	test_of_file();
	test_lock_side();
	remove_tree(dir);
	return done_testing();
}
