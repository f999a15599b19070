/*
 * run_rc: GNU parallel's profiles and $PARALLEL, read as parallel reads
 * them (its read_options): the profiles unless --plain, those -J names or
 * else the default config files, every line but a comment split into
 * words; then $PARALLEL. cmd/run.c parses each list's options in turn, the
 * command line's last.
 */
#include "cmd/cmd.h"
#include "cmd/run_rc.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/str.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void
rc_push(struct rc_words *rc, char *w)
{
	size_t cap = (size_t)rc->cap;

	xgrow(&rc->cmd, &cap, (size_t)rc->ncmd + 2, sizeof *rc->cmd);
	rc->cap = (int)cap;
	rc->cmd[rc->ncmd++] = w;
	rc->cmd[rc->ncmd] = NULL;
}

void
rc_words_free(struct rc_words *rc)
{
	struct rc_list *l;

	while ((l = rc->lists) != NULL) {
		rc->lists = l->next;
		for (int i = 0; i < l->n; i++)
			free(l->w[i]);
		free(l->w);
		free(l->name);
		free(l);
	}
	free(rc->cmd);
	memset(rc, 0, sizeof *rc);
}

static void
add_word(char ***w, int *n, struct sbuf *b)
{
	*w = xrealloc(*w, (size_t)(*n + 2) * sizeof **w);
	(*w)[(*n)++] = sbuf_detach(b);
	(*w)[*n] = NULL;
	sbuf_init(b);
}

int
rc_shellwords(const char *s, char ***w, int *n)
{
	struct sbuf b;
	int in_word = 0;
	char q = 0;

	*w = NULL;
	*n = 0;
	sbuf_init(&b);
	for (const char *p = s; *p; p++) {
		if (q == '\'') {
			if (*p == '\'')
				q = 0;
			else
				sbuf_addc(&b, *p);
			continue;
		}
		if (*p == '\\' && p[1]) {
			sbuf_addc(&b, *++p);
			in_word = 1;
			continue;
		}
		if (q == '"') {
			if (*p == '"')
				q = 0;
			else
				sbuf_addc(&b, *p);
			continue;
		}
		if (*p == '\'' || *p == '"') {
			q = *p;
			in_word = 1;
			continue;
		}
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
			if (in_word)
				add_word(w, n, &b);
			in_word = 0;
			continue;
		}
		sbuf_addc(&b, *p);
		in_word = 1;
	}
	if (q) {
		sbuf_free(&b);
		for (int i = 0; i < *n; i++)
			free((*w)[i]);
		free(*w);
		*w = NULL;
		*n = 0;
		return err_set(EXIT_USAGE, "an unclosed %c quote", q);
	}
	if (in_word)
		add_word(w, n, &b);
	sbuf_free(&b);
	return 0;
}

/* A list of words for getopt: a placeholder first, as argv[0]. */
static struct rc_list *
new_list(struct rc_words *rc, const char *name)
{
	struct rc_list *l = xcalloc(1, sizeof *l), **p;

	l->name = xstrdup(name);
	l->w = xcalloc(2, sizeof *l->w);
	l->w[0] = xstrdup("run");
	l->n = 1;
	for (p = &rc->lists; *p; p = &(*p)->next)
		;
	*p = l;
	return l;
}

static int
list_add(struct rc_list *l, const char *text)
{
	char **w;
	int n;

	if (rc_shellwords(text, &w, &n) < 0)
		return err_prefix("%s", l->name);
	l->w = xrealloc(l->w, (size_t)(l->n + n + 1) * sizeof *l->w);
	memcpy(l->w + l->n, w, (size_t)n * sizeof *w);
	l->n += n;
	l->w[l->n] = NULL;
	free(w);
	return 0;
}

/* A profile: each line that is not a comment, split into words. */
static int
read_profile(struct rc_words *rc, const char *path)
{
	struct rc_list *l;
	char *data, *line, *save = NULL;
	size_t len;

	if (read_file_max(path, 1u << 20, &data, &len) < 0)
		return -1;
	l = new_list(rc, path);
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[strspn(line, " \t")] == '#')
			continue;
		if (list_add(l, line) < 0) {
			free(data);
			return -1;
		}
	}
	free(data);
	return 0;
}

static int
is_dir(const char *p)
{
	struct stat st;

	return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* parallel's config directories that exist: $PARALLEL_HOME, $XDG_CONFIG_HOME/parallel, ..., ~/.parallel */
static int
config_dirs(char dirs[][4096], int max)
{
	const char *ph = getenv("PARALLEL_HOME"), *xh = getenv("XDG_CONFIG_HOME");
	const char *xd = getenv("XDG_CONFIG_DIRS"), *home = getenv("HOME");
	char buf[4096];
	int n = 0;

	if (is_dir(ph) && n < max)
		str_copy(dirs[n++], ph, sizeof dirs[0]);
	if (xh && *xh) {
		snprintf(buf, sizeof buf, "%s/parallel", xh);
		if (is_dir(buf) && n < max)
			str_copy(dirs[n++], buf, sizeof dirs[0]);
	}
	for (const char *p = xd ? xd : ""; *p && n < max; ) {
		size_t len = strcspn(p, ":");

		snprintf(buf, sizeof buf, "%.*s/parallel", (int)len, p);
		if (len && is_dir(buf))
			str_copy(dirs[n++], buf, sizeof dirs[0]);
		p += len;
		p += *p == ':';
	}
	if (home && *home) {
		snprintf(buf, sizeof buf, "%s/.parallel", home);
		if (is_dir(buf) && n < max)
			str_copy(dirs[n++], buf, sizeof dirs[0]);
	}
	return n;
}

/* DIR/NAME when it is readable: 1 read, 0 not there, -1 error. */
static int
read_if_there(struct rc_words *rc, const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s", dir, name);
	int rc_ = 0;

	if (access(path, R_OK) == 0)
		rc_ = read_profile(rc, path) < 0 ? -1 : 1;
	free(path);
	return rc_;
}

/* -J NAME: ./NAME and /NAME as they are, else NAME in each config directory. */
static int
read_named(struct rc_words *rc, const char *name, char dirs[][4096], int ndirs)
{
	int found = 0, rc_;

	if (str_starts(name, "./") || name[0] == '/') {
		if (access(name, R_OK) == 0)
			return read_profile(rc, name);
		warnx_("--profile %s: not readable: ignored (as parallel does)", name);
		return 0;
	}
	for (int i = 0; i < ndirs; i++) {
		if ((rc_ = read_if_there(rc, dirs[i], name)) < 0)
			return -1;
		found |= rc_;
	}
	/* parallel goes on without it */
	if (!found)
		warnx_("--profile %s: no such profile in ~/.parallel (or parallel's other config "
		    "directories): ignored, as parallel does", name);
	return 0;
}

/* The default profiles: those that exist are read. */
static int
read_defaults(struct rc_words *rc, char dirs[][4096], int ndirs)
{
	const char *home = getenv("HOME");

	if (read_if_there(rc, "/etc/parallel", "config") < 0)
		return -1;
	for (int i = 0; i < ndirs; i++)
		if (read_if_there(rc, dirs[i], "config") < 0)
			return -1;
	if (home && *home && read_if_there(rc, home, ".parallelrc") < 0)
		return -1;
	return 0;
}

/* -J and --plain among argv's options (the rest are read later). */
static void
scan_argv(const struct opttab *ot, int argc, char **argv, const int ids[2], const char ***profiles,
    int *np, int *plain)
{
	int ch, word;

	optind = 0;
	opterr = 0;
	while ((ch = opt_next(argc, argv, ot->shortopts, ot->longs, &word)) != -1) {
		const struct optdef *d = opttab_entry(ot, ch);

		if (!d || ch == '?' || ch == ':')
			break;
		if (d->id == ids[1]) {
			*plain = 1;
		} else if (d->id == ids[0]) {
			*profiles = xrealloc(*profiles, (size_t)(*np + 1) * sizeof **profiles);
			(*profiles)[(*np)++] = optarg;
		}
	}
}

int
rc_read(struct rc_words *rc, const struct opttab *ot, int argc, char **argv, const int ids[2])
{
	const char **profiles = NULL, *env = getenv("PARALLEL");
	char dirs[8][4096];
	int np = 0, plain = 0, ndirs, rc_ = 0;

	scan_argv(ot, argc, argv, ids, &profiles, &np, &plain);
	if (plain) {
		free(profiles);
		return 0;
	}
	ndirs = config_dirs(dirs, 8);
	if (np == 0)
		rc_ = read_defaults(rc, dirs, ndirs);
	for (int i = 0; i < np && rc_ == 0; i++)
		rc_ = read_named(rc, profiles[i], dirs, ndirs);
	free(profiles);
	if (rc_ < 0)
		return -1;
	if (env && *env && list_add(new_list(rc, "$PARALLEL"), env) < 0)
		return -1;
	return 0;
}

int
rc_cpu_count(int what)
{
	char *data, *line, *save = NULL;
	size_t len;
	int threads = 0, sockets = 0, cores = 0, phys = -1;
	/* (physical id, core id) pairs seen */
	long seen[1024][2];
	int nseen = 0, socks[256], nsocks = 0;

	if (read_file("/proc/cpuinfo", &data, &len) < 0) {
		err_clear();
		return 1;
	}
	for (line = strtok_r(data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *colon = strchr(line, ':');
		long v = colon ? strtol(colon + 1, NULL, 10) : 0;
		int k;

		if (str_starts(line, "processor")) {
			threads++;
		} else if (str_starts(line, "physical id")) {
			phys = (int)v;
			for (k = 0; k < nsocks && socks[k] != phys; k++)
				;
			if (k == nsocks && nsocks < 256)
				socks[nsocks++] = phys;
		} else if (str_starts(line, "core id")) {
			for (k = 0; k < nseen && !(seen[k][0] == phys && seen[k][1] == v); k++)
				;
			if (k == nseen && nseen < 1024) {
				seen[nseen][0] = phys;
				seen[nseen][1] = v;
				nseen++;
			}
		}
	}
	free(data);
	sockets = nsocks ? nsocks : 1;
	cores = nseen ? nseen : threads;
	if (threads == 0)
		threads = 1;
	if (cores == 0)
		cores = 1;
	return what == RC_SOCKETS ? sockets : what == RC_THREADS ? threads : cores;
}
