/*
 * simfs: the in-memory shared directory (simfs.h). The wrapped calls are
 * the ones src/farm/nodes*.c, farm/journal.c and util/fs.c make; a call on
 * a path outside /sim, or on a descriptor not ours, is the real one.
 */
#include "simfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define ROOT "/sim"
#define FD_BASE (1 << 28)
#define CACHE_SLOTS 2048
#define DIR_CACHE 8
#define TARGET_MAX 96

struct simfs_count simfs_server, simfs_calls;

enum { T_NONE, T_FILE, T_DIR, T_LINK };

/* what a client may have appended: its end, visible to the others from `at` */
struct vis {
	size_t end;
	double at;
};

struct ent {
	char *path;
	int type;
	char *target;
	char *data;
	size_t len, cap;
	struct vis *vis;
	size_t nvis, capvis;
	int writer;
	double mtime;
	unsigned long long ino;
	struct ent **kids;        /* ever created in it (a name gone is T_NONE) */
	size_t nkids, capkids;
	int listed;               /* in its parent's kids already */
};

/* a client's cached answer about a name */
struct cached {
	uint64_t h;
	double at;
	int type;
	double mtime;
	size_t size;
	char target[TARGET_MAX];
};

struct dsnap {
	uint64_t h;
	double at;
	char **names;
	size_t n;
};

struct client {
	struct cached *cache;
	struct dsnap dirs[DIR_CACHE];
	unsigned next_dir;
};

struct ofile {
	int used;
	struct ent *e;
	int flags;
	size_t off;
	size_t size;              /* what this open sees of another client's file */
	double mtime;
	char *dirpath;            /* a directory opened (O_DIRECTORY) */
};

struct sdir {
	uint32_t magic;
	char **names;
	size_t n, at;
	struct dirent de;
};

static struct simfs_opts opt;
static struct ent **tab;
static size_t tabcap, tabn;
static struct client *cl;
static int ncl, cur;
static double now_t;
static struct ofile *fds;
static size_t nfds;
static unsigned long long next_ino = 100;
static struct sdir *open_dirs[64];

/* ---- the server ---------------------------------------------------------------- */

static uint64_t
hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static int
ours(const char *p)
{
	return p && strncmp(p, ROOT, sizeof ROOT - 1) == 0 && (p[sizeof ROOT - 1] == '/' || p[sizeof ROOT - 1] == '\0');
}

static void
grow_tab(void)
{
	struct ent **old = tab;
	size_t oldcap = tabcap;

	tabcap = tabcap ? tabcap * 2 : 1 << 16;
	tab = calloc(tabcap, sizeof *tab);
	for (size_t i = 0; i < oldcap; i++) {
		if (!old[i])
			continue;
		size_t k = hash(old[i]->path) & (tabcap - 1);

		while (tab[k])
			k = (k + 1) & (tabcap - 1);
		tab[k] = old[i];
	}
	free(old);
}

/* The entry of path, made (T_NONE) when make and not there. */
static struct ent *
ent(const char *path, int make)
{
	size_t k;

	if (tabn * 2 >= tabcap)
		grow_tab();
	k = hash(path) & (tabcap - 1);
	while (tab[k]) {
		if (strcmp(tab[k]->path, path) == 0)
			return tab[k];
		k = (k + 1) & (tabcap - 1);
	}
	if (!make)
		return NULL;
	tab[k] = calloc(1, sizeof **tab);
	tab[k]->path = strdup(path);
	tab[k]->writer = -1;
	tabn++;
	return tab[k];
}

static struct ent *
live(const char *path)
{
	struct ent *e = ent(path, 0);

	return e && e->type != T_NONE ? e : NULL;
}

static struct ent *
parent_of(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');

	if (!slash || slash == path)
		return NULL;
	snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
	return live(dir);
}

/* Create path as type: 0 made, -1 with errno. */
static int
create(const char *path, int type, const char *target)
{
	struct ent *p = parent_of(path), *e;

	if (!p || p->type != T_DIR) {
		errno = p ? ENOTDIR : ENOENT;
		return -1;
	}
	e = ent(path, 1);
	if (e->type != T_NONE) {
		errno = EEXIST;
		return -1;
	}
	e->type = type;
	free(e->target);
	e->target = target ? strdup(target) : NULL;
	e->len = 0;
	e->nvis = 0;
	e->writer = cur;
	e->mtime = now_t;
	e->ino = next_ino++;
	p->mtime = now_t;
	if (!e->listed) {
		if (p->nkids == p->capkids) {
			p->capkids = p->capkids ? p->capkids * 2 : 16;
			p->kids = realloc(p->kids, p->capkids * sizeof *p->kids);
		}
		p->kids[p->nkids++] = e;
		e->listed = 1;
	}
	return 0;
}

/* How much of e another client sees now. */
static size_t
visible(const struct ent *e)
{
	size_t lo = 0, hi = e->nvis;

	if (e->writer == cur || opt.append_delay <= 0 || e->nvis == 0)
		return e->len;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (e->vis[mid].at <= now_t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? e->vis[lo - 1].end : 0;
}

unsigned long long
simfs_meta(const struct simfs_count *c)
{
	return c->create + c->lookup + c->getattr + c->setattr + c->readdir + c->rename + c->remove +
	    c->sync;
}

unsigned long long
simfs_names(void)
{
	unsigned long long n = 0;

	for (size_t i = 0; i < tabcap; i++)
		n += tab[i] && tab[i]->type != T_NONE;
	return n;
}

int
simfs_peek(const char *path, const char **data, size_t *len)
{
	struct ent *e = live(path);

	if (!e || e->type != T_FILE)
		return -1;
	*data = e->data;
	*len = e->len;
	return 0;
}

void
simfs_init(const struct simfs_opts *o, int nclients)
{
	opt = *o;
	ncl = nclients;
	cl = calloc((size_t)nclients, sizeof *cl);
	for (int i = 0; o->ttl > 0 && i < nclients; i++)
		cl[i].cache = calloc(CACHE_SLOTS, sizeof *cl[i].cache);
	ent(ROOT, 1)->type = T_DIR;
}

void
simfs_client(int c)
{
	cur = c;
}

void
simfs_now(double t)
{
	now_t = t;
}

/* ---- what a client sees of a name ------------------------------------------------- */

struct view {
	int type;
	double mtime;
	size_t size;
	char target[4096];
	struct ent *e;
};

static void
fill(struct view *v, struct ent *e)
{
	v->e = e;
	v->type = e ? e->type : T_NONE;
	v->mtime = e ? e->mtime : 0;
	v->size = e ? visible(e) : 0;
	v->target[0] = '\0';
	if (e && e->type == T_LINK)
		snprintf(v->target, sizeof v->target, "%s", e->target);
}

static void
remember(const char *path, const struct view *v)
{
	struct cached *c;
	uint64_t h;

	if (opt.ttl <= 0)
		return;
	h = hash(path);
	c = &cl[cur].cache[h % CACHE_SLOTS];
	if (strlen(v->target) >= TARGET_MAX) {
		c->h = 0;
		return;
	}
	c->h = h;
	c->at = now_t;
	c->type = v->type;
	c->mtime = v->mtime;
	c->size = v->size;
	memcpy(c->target, v->target, strlen(v->target) + 1);
}

/*
 * Look path up as this client would: from its cache while fresh (a name
 * cache answers negatively too), else from the server (a counted op).
 */
static void
look(const char *path, struct view *v, unsigned long long *op)
{
	if (opt.ttl > 0) {
		uint64_t h = hash(path);
		struct cached *c = &cl[cur].cache[h % CACHE_SLOTS];

		if (c->h == h && now_t - c->at < opt.ttl) {
			simfs_calls.cached++;
			v->e = c->type == T_NONE ? NULL : live(path);
			v->type = c->type;
			v->mtime = c->mtime;
			v->size = c->size;
			snprintf(v->target, sizeof v->target, "%s", c->target);
			return;
		}
	}
	(*op)++;
	fill(v, live(path));
	remember(path, v);
}

/* The server's answer now, kept in the cache (after a change this client made). */
static void
refresh(const char *path)
{
	struct view v;

	fill(&v, live(path));
	remember(path, &v);
}

static void
to_stat(const struct view *v, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_mode = (v->type == T_DIR ? S_IFDIR | 0755 : v->type == T_LINK ? S_IFLNK | 0777 : S_IFREG | 0644);
	st->st_nlink = 1;
	st->st_size = (off_t)(v->type == T_LINK ? strlen(v->target) : v->size);
	st->st_ino = v->e ? v->e->ino : 1;
	st->st_dev = 0x51;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_mtim.tv_sec = (time_t)v->mtime;
	st->st_mtim.tv_nsec = (long)((v->mtime - (double)(time_t)v->mtime) * 1e9);
	st->st_ctim = st->st_mtim;
	st->st_atim = st->st_mtim;
}

/* ---- descriptors ------------------------------------------------------------------ */

static struct ofile *
ofile(int fd)
{
	if (fd < FD_BASE || (size_t)(fd - FD_BASE) >= nfds || !fds[fd - FD_BASE].used)
		return NULL;
	return &fds[fd - FD_BASE];
}

static int
new_fd(struct ent *e, int flags, const struct view *v)
{
	size_t i;

	for (i = 0; i < nfds && fds[i].used; i++)
		;
	if (i == nfds) {
		nfds = nfds ? nfds * 2 : 64;
		fds = realloc(fds, nfds * sizeof *fds);
		memset(fds + i, 0, (nfds - i) * sizeof *fds);
	}
	fds[i] = (struct ofile){.used = 1, .e = e, .flags = flags, .size = v->size, .mtime = v->mtime};
	if (e->type == T_DIR)
		fds[i].dirpath = strdup(e->path);
	return FD_BASE + (int)i;
}

static void
at_path(int dirfd, const char *name, char *out, size_t size)
{
	struct ofile *o = ofile(dirfd);

	if (name[0] == '/' || !o || !o->dirpath)
		snprintf(out, size, "%s", name);
	else
		snprintf(out, size, "%s/%s", o->dirpath, name);
}

/* ---- the wrapped calls ------------------------------------------------------------- */

int __real_open(const char *, int, ...);
int __real_openat(int, const char *, int, ...);
int __real_close(int);
ssize_t __real_read(int, void *, size_t);
ssize_t __real_write(int, const void *, size_t);
ssize_t __real_pread(int, void *, size_t, off_t);
off_t __real_lseek(int, off_t, int);
int __real_ftruncate(int, off_t);
int __real_fsync(int);
int __real_fdatasync(int);
int __real_fstat(int, struct stat *);
int __real_lstat(const char *, struct stat *);
int __real_stat(const char *, struct stat *);
int __real_fstatat(int, const char *, struct stat *, int);
int __real_access(const char *, int);
int __real_futimens(int, const struct timespec *);
int __real_symlink(const char *, const char *);
ssize_t __real_readlink(const char *, char *, size_t);
int __real_mkdir(const char *, mode_t);
int __real_unlink(const char *);
int __real_unlinkat(int, const char *, int);
int __real_rename(const char *, const char *);
int __real_renameat(int, const char *, int, const char *);
DIR *__real_opendir(const char *);
struct dirent *__real_readdir(DIR *);
int __real_closedir(DIR *);

int __wrap_open(const char *p, int flags, ...);
int __wrap_openat(int dirfd, const char *p, int flags, ...);
int __wrap_close(int fd);
ssize_t __wrap_read(int fd, void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n);
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off);
off_t __wrap_lseek(int fd, off_t off, int whence);
int __wrap_ftruncate(int fd, off_t len);
int __wrap_fsync(int fd);
int __wrap_fdatasync(int fd);
int __wrap_fstat(int fd, struct stat *st);
int __wrap_lstat(const char *p, struct stat *st);
int __wrap_stat(const char *p, struct stat *st);
int __wrap_fstatat(int dirfd, const char *p, struct stat *st, int flags);
int __wrap_access(const char *p, int mode);
int __wrap_futimens(int fd, const struct timespec *t);
int __wrap_symlink(const char *target, const char *p);
ssize_t __wrap_readlink(const char *p, char *buf, size_t n);
int __wrap_mkdir(const char *p, mode_t mode);
int __wrap_unlink(const char *p);
int __wrap_unlinkat(int dirfd, const char *p, int flags);
int __wrap_rename(const char *a, const char *b);
int __wrap_renameat(int da, const char *a, int db, const char *b);
DIR *__wrap_opendir(const char *p);
struct dirent *__wrap_readdir(DIR *d);
int __wrap_closedir(DIR *d);

static int
sim_open(const char *p, int flags)
{
	struct view v;

	if (flags & O_CREAT) {
		simfs_calls.create++;
		simfs_server.create++;
		if (create(p, T_FILE, NULL) == 0) {
			refresh(p);
			fill(&v, live(p));
			return new_fd(v.e, flags, &v);
		}
		if (errno != EEXIST || (flags & O_EXCL))
			return -1;
	}
	simfs_calls.lookup++;
	/* close-to-open: open asks the server for the file's attributes; without it, the cache may answer */
	if (opt.nocto)
		look(p, &v, &simfs_server.lookup);
	else {
		simfs_server.lookup++;
		fill(&v, live(p));
		remember(p, &v);
	}
	if (v.type == T_NONE || !v.e) {
		errno = ENOENT;
		return -1;
	}
	if (v.type == T_LINK) {
		errno = ELOOP;
		return -1;
	}
	if ((flags & O_DIRECTORY) && v.type != T_DIR) {
		errno = ENOTDIR;
		return -1;
	}
	if ((flags & O_TRUNC) && v.e->type == T_FILE) {
		v.e->len = 0;
		v.e->nvis = 0;
		v.size = 0;
	}
	return new_fd(v.e, flags, &v);
}

static int
mode_arg(int flags, va_list ap)
{
	return (flags & O_CREAT) ? va_arg(ap, int) : 0;
}

int
__wrap_open(const char *p, int flags, ...)
{
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	if (!ours(p))
		return __real_open(p, flags, mode);
	return sim_open(p, flags);
}

int
__wrap_openat(int dirfd, const char *p, int flags, ...)
{
	char path[4096];
	va_list ap;
	int mode;

	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	at_path(dirfd, p, path, sizeof path);
	if (!ours(path))
		return __real_openat(dirfd, p, flags, mode);
	return sim_open(path, flags);
}

int
__wrap_close(int fd)
{
	struct ofile *o = ofile(fd);

	if (!o)
		return __real_close(fd);
	free(o->dirpath);
	memset(o, 0, sizeof *o);
	return 0;
}

/* What this open sees of its file: all of it when this client wrote it. */
static size_t
seen(const struct ofile *o)
{
	return o->e->writer == cur ? o->e->len : o->size < o->e->len ? o->size : o->e->len;
}

ssize_t
__wrap_pread(int fd, void *buf, size_t n, off_t off)
{
	struct ofile *o = ofile(fd);
	size_t end;

	if (!o)
		return __real_pread(fd, buf, n, off);
	simfs_calls.read++;
	simfs_server.read++;
	end = seen(o);
	if ((size_t)off >= end)
		return 0;
	if (n > end - (size_t)off)
		n = end - (size_t)off;
	memcpy(buf, o->e->data + off, n);
	return (ssize_t)n;
}

ssize_t
__wrap_read(int fd, void *buf, size_t n)
{
	struct ofile *o = ofile(fd);
	ssize_t r;

	if (!o)
		return __real_read(fd, buf, n);
	r = __wrap_pread(fd, buf, n, (off_t)o->off);
	if (r > 0)
		o->off += (size_t)r;
	return r;
}

ssize_t
__wrap_write(int fd, const void *buf, size_t n)
{
	struct ofile *o = ofile(fd);
	struct ent *e;
	size_t at;

	if (!o)
		return __real_write(fd, buf, n);
	e = o->e;
	simfs_calls.write++;
	simfs_server.write++;
	simfs_server.bytes += n;
	at = (o->flags & O_APPEND) ? e->len : o->off;
	if (at + n > e->cap) {
		e->cap = (at + n) * 2 + 256;
		e->data = realloc(e->data, e->cap);
	}
	if (at > e->len)
		memset(e->data + e->len, 0, at - e->len);
	memcpy(e->data + at, buf, n);
	if (at + n > e->len)
		e->len = at + n;
	o->off = at + n;
	e->writer = cur;
	e->mtime = now_t;
	if (e->nvis == e->capvis) {
		e->capvis = e->capvis ? e->capvis * 2 : 16;
		e->vis = realloc(e->vis, e->capvis * sizeof *e->vis);
	}
	e->vis[e->nvis++] = (struct vis){e->len, now_t + opt.append_delay};
	return (ssize_t)n;
}

off_t
__wrap_lseek(int fd, off_t off, int whence)
{
	struct ofile *o = ofile(fd);

	if (!o)
		return __real_lseek(fd, off, whence);
	if (whence == SEEK_SET)
		o->off = (size_t)off;
	else if (whence == SEEK_CUR)
		o->off += (size_t)off;
	else
		o->off = seen(o) + (size_t)off;
	return (off_t)o->off;
}

int
__wrap_ftruncate(int fd, off_t len)
{
	struct ofile *o = ofile(fd);
	struct ent *e;

	if (!o)
		return __real_ftruncate(fd, len);
	e = o->e;
	simfs_calls.setattr++;
	simfs_server.setattr++;
	if ((size_t)len < e->len) {
		e->len = (size_t)len;
		while (e->nvis > 0 && e->vis[e->nvis - 1].end > e->len)
			e->nvis--;
		if (e->nvis == 0 || e->vis[e->nvis - 1].end < e->len) {
			/* what is left was there before: seen by all */
			e->nvis = 0;
			if (e->len > 0) {
				if (e->capvis == 0) {
					e->capvis = 16;
					e->vis = realloc(e->vis, e->capvis * sizeof *e->vis);
				}
				e->vis[e->nvis++] = (struct vis){e->len, now_t};
			}
		}
	}
	e->mtime = now_t;
	return 0;
}

int
__wrap_fsync(int fd)
{
	if (!ofile(fd))
		return __real_fsync(fd);
	simfs_calls.sync++;
	simfs_server.sync++;
	return 0;
}

int
__wrap_fdatasync(int fd)
{
	if (!ofile(fd))
		return __real_fdatasync(fd);
	simfs_calls.sync++;
	simfs_server.sync++;
	return 0;
}

int
__wrap_fstat(int fd, struct stat *st)
{
	struct ofile *o = ofile(fd);
	struct view v;

	if (!o)
		return __real_fstat(fd, st);
	simfs_calls.getattr++;
	/* the attributes open(2) fetched, or what this client wrote since */
	fill(&v, o->e);
	if (o->e->writer != cur) {
		v.size = o->size;
		v.mtime = o->mtime;
	}
	to_stat(&v, st);
	return 0;
}

static int
sim_lstat(const char *p, struct stat *st)
{
	struct view v;

	simfs_calls.lookup++;
	look(p, &v, &simfs_server.lookup);
	if (v.type == T_NONE) {
		errno = ENOENT;
		return -1;
	}
	to_stat(&v, st);
	return 0;
}

int
__wrap_lstat(const char *p, struct stat *st)
{
	return ours(p) ? sim_lstat(p, st) : __real_lstat(p, st);
}

int
__wrap_stat(const char *p, struct stat *st)
{
	return ours(p) ? sim_lstat(p, st) : __real_stat(p, st);
}

int
__wrap_fstatat(int dirfd, const char *p, struct stat *st, int flags)
{
	char path[4096];

	at_path(dirfd, p, path, sizeof path);
	return ours(path) ? sim_lstat(path, st) : __real_fstatat(dirfd, p, st, flags);
}

int
__wrap_access(const char *p, int mode)
{
	struct stat st;

	return ours(p) ? sim_lstat(p, &st) : __real_access(p, mode);
}

int
__wrap_futimens(int fd, const struct timespec *t)
{
	struct ofile *o = ofile(fd);

	if (!o)
		return __real_futimens(fd, t);
	simfs_calls.setattr++;
	simfs_server.setattr++;
	/* the server's clock, and its answer carries the new attributes back */
	o->e->mtime = now_t;
	o->mtime = now_t;
	o->size = o->e->len;
	refresh(o->e->path);
	return 0;
}

int
__wrap_symlink(const char *target, const char *p)
{
	if (!ours(p))
		return __real_symlink(target, p);
	simfs_calls.create++;
	simfs_server.create++;
	if (create(p, T_LINK, target) < 0) {
		if (errno == EEXIST)
			simfs_server.exists++;
		return -1;
	}
	refresh(p);
	return 0;
}

ssize_t
__wrap_readlink(const char *p, char *buf, size_t n)
{
	struct view v;
	size_t len;

	if (!ours(p))
		return __real_readlink(p, buf, n);
	simfs_calls.lookup++;
	look(p, &v, &simfs_server.lookup);
	if (v.type != T_LINK) {
		errno = v.type == T_NONE ? ENOENT : EINVAL;
		return -1;
	}
	len = strlen(v.target);
	if (len > n)
		len = n;
	memcpy(buf, v.target, len);
	return (ssize_t)len;
}

int
__wrap_mkdir(const char *p, mode_t mode)
{
	if (!ours(p))
		return __real_mkdir(p, mode);
	simfs_calls.create++;
	simfs_server.create++;
	if (create(p, T_DIR, NULL) < 0)
		return -1;
	refresh(p);
	return 0;
}

static int
sim_unlink(const char *p)
{
	struct ent *e = live(p);

	simfs_calls.remove++;
	simfs_server.remove++;
	if (!e) {
		errno = ENOENT;
		return -1;
	}
	if (e->type == T_DIR) {
		errno = EISDIR;
		return -1;
	}
	e->type = T_NONE;
	e->len = 0;
	e->nvis = 0;
	refresh(p);
	return 0;
}

int
__wrap_unlink(const char *p)
{
	return ours(p) ? sim_unlink(p) : __real_unlink(p);
}

int
__wrap_unlinkat(int dirfd, const char *p, int flags)
{
	char path[4096];

	at_path(dirfd, p, path, sizeof path);
	return ours(path) ? sim_unlink(path) : __real_unlinkat(dirfd, p, flags);
}

/* rename(2): one step on the server; the new name takes the old one's content. */
static int
sim_rename(const char *a, const char *b)
{
	struct ent *from = live(a), *to;

	simfs_calls.rename++;
	simfs_server.rename++;
	if (!from) {
		errno = ENOENT;
		return -1;
	}
	if (!live(b) && create(b, from->type, from->target) < 0)
		return -1;
	to = live(b);
	if (to->type == T_DIR || from->type == T_DIR) {
		errno = EISDIR;
		return -1;
	}
	free(to->data);
	free(to->vis);
	free(to->target);
	to->type = from->type;
	to->target = from->target;
	to->data = from->data;
	to->len = from->len;
	to->cap = from->cap;
	to->vis = from->vis;
	to->nvis = from->nvis;
	to->capvis = from->capvis;
	to->writer = from->writer;
	to->mtime = now_t;
	to->ino = from->ino;
	from->target = from->data = NULL;
	from->vis = NULL;
	from->len = from->cap = from->nvis = from->capvis = 0;
	from->type = T_NONE;
	refresh(a);
	refresh(b);
	return 0;
}

int
__wrap_rename(const char *a, const char *b)
{
	return ours(a) ? sim_rename(a, b) : __real_rename(a, b);
}

int
__wrap_renameat(int da, const char *a, int db, const char *b)
{
	char pa[4096], pb[4096];

	at_path(da, a, pa, sizeof pa);
	at_path(db, b, pb, sizeof pb);
	return ours(pa) ? sim_rename(pa, pb) : __real_renameat(da, a, db, b);
}

/* The names in dir now, as the server lists them (READDIR: one call per 128 names). */
static void
list_server(struct ent *d, struct dsnap *s)
{
	s->names = malloc((d->nkids + 1) * sizeof *s->names);
	s->n = 0;
	for (size_t i = 0; i < d->nkids; i++)
		if (d->kids[i]->type != T_NONE)
			s->names[s->n++] = strdup(strrchr(d->kids[i]->path, '/') + 1);
	simfs_server.readdir += 1 + s->n / 128;
}

static void
free_snap(struct dsnap *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	memset(s, 0, sizeof *s);
}

DIR *
__wrap_opendir(const char *p)
{
	struct ent *d;
	struct sdir *sd;
	struct dsnap snap = {0}, *use = NULL;
	uint64_t h;
	size_t k;

	if (!ours(p))
		return __real_opendir(p);
	simfs_calls.readdir++;
	d = live(p);
	if (!d || d->type != T_DIR) {
		errno = d ? ENOTDIR : ENOENT;
		return NULL;
	}
	h = hash(p);
	/* a directory's listing is cached as its names are */
	for (int i = 0; opt.ttl > 0 && i < DIR_CACHE; i++)
		if (cl[cur].dirs[i].h == h && now_t - cl[cur].dirs[i].at < opt.ttl) {
			use = &cl[cur].dirs[i];
			simfs_calls.cached++;
		}
	if (!use) {
		list_server(d, &snap);
		snap.h = h;
		snap.at = now_t;
		use = &snap;
		if (opt.ttl > 0) {
			struct dsnap *slot = &cl[cur].dirs[cl[cur].next_dir++ % DIR_CACHE];

			for (int i = 0; i < DIR_CACHE; i++)
				if (cl[cur].dirs[i].h == h)
					slot = &cl[cur].dirs[i];
			free_snap(slot);
			*slot = snap;
			use = slot;
		}
	}
	sd = calloc(1, sizeof *sd);
	sd->magic = 0x51d1;
	sd->n = use->n;
	sd->names = malloc((use->n + 1) * sizeof *sd->names);
	for (size_t i = 0; i < use->n; i++)
		sd->names[i] = strdup(use->names[i]);
	if (use == &snap)
		free_snap(&snap);
	for (k = 0; k < sizeof open_dirs / sizeof *open_dirs && open_dirs[k]; k++)
		;
	if (k == sizeof open_dirs / sizeof *open_dirs)
		abort();
	open_dirs[k] = sd;
	return (DIR *)sd;
}

static struct sdir *
sdir(DIR *d)
{
	for (size_t k = 0; k < sizeof open_dirs / sizeof *open_dirs; k++)
		if (open_dirs[k] && (DIR *)open_dirs[k] == d)
			return open_dirs[k];
	return NULL;
}

struct dirent *
__wrap_readdir(DIR *d)
{
	struct sdir *s = sdir(d);

	if (!s)
		return __real_readdir(d);
	if (s->at >= s->n)
		return NULL;
	memset(&s->de, 0, sizeof s->de);
	snprintf(s->de.d_name, sizeof s->de.d_name, "%s", s->names[s->at++]);
	s->de.d_type = DT_UNKNOWN;
	return &s->de;
}

int
__wrap_closedir(DIR *d)
{
	struct sdir *s = sdir(d);

	if (!s)
		return __real_closedir(d);
	for (size_t k = 0; k < sizeof open_dirs / sizeof *open_dirs; k++)
		if (open_dirs[k] == s)
			open_dirs[k] = NULL;
	for (size_t i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	free(s);
	return 0;
}
