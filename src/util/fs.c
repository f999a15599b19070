/*
 * fs: the checks that keep MPS pipe directories and journals private.
 * Every directory gpupack keeps state in is opened with O_NOFOLLOW and
 * checked with fstat on the open descriptor, so that a symlink planted
 * between the check and the use is refused rather than followed; below the
 * state directory each component is opened relative to the one before
 * (openat), and state files are read and written relative to their
 * directory's descriptor, so a component swapped while gpupack works
 * redirects nothing. Every file read is bounded and must be a regular file:
 * a FIFO or a device where a file is expected is refused, not waited on.
 */
#include "util/fs.h"
#include "util/err.h"
#include "util/str.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What st is, for messages: "a symbolic link", "a FIFO", ... */
static const char *
kind_of(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return "a symbolic link";
	if (S_ISDIR(st->st_mode))
		return "a directory";
	if (S_ISFIFO(st->st_mode))
		return "a FIFO";
	if (S_ISSOCK(st->st_mode))
		return "a socket";
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return "a device";
	return "a file";
}

/* The checks of a private directory, on its open descriptor. */
static int
check_private(int fd, const char *shown)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return err_sys(EXIT_ENV, "cannot stat %s", shown);
	/* errno says refused, not missing: callers tell "none yet" by ENOENT */
	errno = EPERM;
	if (st.st_uid != geteuid())
		return err_set(EXIT_ENV, "%s is owned by uid %u, not by you (uid %u); refusing to use it",
		    shown, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 077)
		return err_set(EXIT_ENV, "%s has mode %04o, open to other users; refusing to use it "
		    "(it must be 0700)", shown, (unsigned)(st.st_mode & 07777));
	return 0;
}

static int
private_dir_shown(int parent, const char *name, const char *shown, int create)
{
	struct stat st;
	int fd;

	if (create && mkdirat(parent, name, 0700) < 0 && errno != EEXIST)
		return err_sys(EXIT_ENV, "cannot create directory %s", shown);
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if ((e == ELOOP || e == ENOTDIR) && fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			errno = e;
			if (S_ISLNK(st.st_mode))
				return err_set(EXIT_ENV, "%s is a symbolic link; refusing to use it", shown);
			return err_set(EXIT_ENV, "%s is not a directory (%s); refusing to use it", shown,
			    kind_of(&st));
		}
		if (e == ENOENT && !create) {
			err_set(EXIT_ENV, "%s does not exist", shown);
			errno = ENOENT; /* callers that create nothing tell "none yet" by it */
			return -1;
		}
		errno = e;
		return err_sys(EXIT_ENV, "cannot open directory %s", shown);
	}
	if (check_private(fd, shown) < 0) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

int
private_dir_at(int parent, const char *name, const char *shown, int create)
{
	return private_dir_shown(parent, name, shown ? shown : name, create);
}

int
private_dir(const char *path)
{
	int fd = private_dir_shown(AT_FDCWD, path, path, 1);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static void
state_base(char *base, size_t size)
{
	const char *env = getenv("GPUPACK_STATE_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (env && *env)
		snprintf(base, size, "%s", env);
	else if (xdg && *xdg && access(xdg, W_OK) == 0)
		snprintf(base, size, "%s/gpupack", xdg);
	else
		snprintf(base, size, "/tmp/gpupack-%u", (unsigned)geteuid());
}

int
state_exists(const char *sub)
{
	char path[PATH_MAX];
	struct stat st;

	state_base(path, sizeof path);
	if (sub && *sub && strlen(path) + 1 + strlen(sub) < sizeof path) {
		strcat(path, "/");
		strcat(path, sub);
	}
	return lstat(path, &st) == 0;
}

int
state_path(const char *sub, char *out, size_t size)
{
	char base[PATH_MAX];

	state_base(base, sizeof base);
	if ((size_t)snprintf(out, size, "%s/%s", base, sub) >= size)
		return err_set(EXIT_ENV, "state directory path too long");
	return 0;
}

int
state_dir_fd(const char *sub, int create, char *out, size_t size)
{
	char base[PATH_MAX];
	size_t at;
	int fd;

	state_base(base, sizeof base);
	if (str_copy(out, base, size) >= size)
		return err_set(EXIT_ENV, "state directory path too long");
	fd = private_dir_shown(AT_FDCWD, base, base, create);
	if (fd < 0) {
		int e = errno;

		err_prefix("state directory");
		errno = e;
		return -1;
	}
	if (!sub || !*sub)
		return fd;
	if ((size_t)snprintf(out, size, "%s/%s", base, sub) >= size) {
		close(fd);
		return err_set(EXIT_ENV, "state directory path too long");
	}
	/* each component of sub in turn, relative to the one before: nothing is followed */
	at = strlen(base) + 1;
	while (out[at]) {
		size_t n = strcspn(out + at, "/");
		char save = out[at + n], name[NAME_MAX + 1];
		int next;

		if (n == 0 || n > NAME_MAX) {
			close(fd);
			return err_set(EXIT_INTERNAL, "bad state path %s", out);
		}
		memcpy(name, out + at, n);
		name[n] = '\0';
		out[at + n] = '\0';
		next = private_dir_shown(fd, name, out, create);
		out[at + n] = save;
		if (next < 0) {
			int e = errno;

			close(fd);
			errno = e;
			return -1;
		}
		close(fd);
		fd = next;
		at += n + (save ? 1 : 0);
	}
	return fd;
}

int
state_dir(const char *sub, char *out, size_t size)
{
	int fd = state_dir_fd(sub, 1, out, size);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* Read all of fd (a regular file of at most max bytes); shown names it in errors. */
static int
read_fd(int fd, const char *shown, size_t max, char **data, size_t *len)
{
	struct sbuf b;
	struct stat st;
	char chunk[8192];
	ssize_t n;

	if (fstat(fd, &st) < 0)
		return err_sys(EXIT_USAGE, "cannot stat %s", shown);
	if (!S_ISREG(st.st_mode))
		return err_set(EXIT_USAGE, "%s is %s, not a regular file", shown, kind_of(&st));
	if ((uint64_t)st.st_size > max)
		return err_set(EXIT_USAGE, "%s is larger than %zu bytes: not a file gpupack reads", shown,
		    max);
	sbuf_init(&b);
	while ((n = read(fd, chunk, sizeof chunk)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			sbuf_free(&b);
			return err_sys(EXIT_USAGE, "cannot read %s", shown);
		}
		/* /proc files say size 0; a file that grows while read is bounded too */
		if (b.len + (size_t)n > max) {
			sbuf_free(&b);
			return err_set(EXIT_USAGE, "%s is larger than %zu bytes: not a file gpupack reads",
			    shown, max);
		}
		sbuf_addn(&b, chunk, (size_t)n);
	}
	if (len)
		*len = b.len;
	*data = sbuf_detach(&b);
	if (!*data)
		*data = xstrdup("");
	return 0;
}

int
read_file_max(const char *path, size_t max, char **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), rc;

	*data = NULL;
	if (fd < 0)
		return err_sys(EXIT_USAGE, "cannot open %s", path);
	rc = read_fd(fd, path, max, data, len);
	close(fd);
	return rc;
}

int
read_file_at(int dirfd, const char *name, size_t max, char **data, size_t *len)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC), rc;

	*data = NULL;
	if (fd < 0) {
		if (errno == ELOOP)
			return err_set(EXIT_ENV, "%s is a symbolic link; refusing to read it", name);
		return err_sys(errno == ENOENT ? EXIT_USAGE : EXIT_ENV, "cannot open %s", name);
	}
	rc = read_fd(fd, name, max, data, len);
	close(fd);
	return rc;
}

int
read_file(const char *path, char **data, size_t *len)
{
	return read_file_max(path, READ_FILE_MAX, data, len);
}

int
write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		if (w == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int
write_file_atomic_at(int dirfd, const char *name, const char *data, size_t len, int mode)
{
	char tmp[NAME_MAX + 1];
	int fd;

	if ((size_t)snprintf(tmp, sizeof tmp, ".%s.tmp.%ld", name, (long)getpid()) >= sizeof tmp)
		return err_set(EXIT_ENV, "name too long: %s", name);
	/* a temporary left by a killed writer of our pid: ours to replace, never to follow */
	if (unlinkat(dirfd, tmp, 0) < 0 && errno != ENOENT)
		return err_sys(EXIT_ENV, "cannot remove %s", tmp);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return err_sys(EXIT_ENV, "cannot create %s", tmp);
	if (write_all(fd, data, len) < 0) {
		err_sys(EXIT_ENV, "cannot write %s", tmp);
		goto fail;
	}
	if (fsync(fd) < 0) {
		err_sys(EXIT_ENV, "cannot sync %s", tmp);
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		err_sys(EXIT_ENV, "cannot close %s", tmp);
		goto fail;
	}
	fd = -1;
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		err_sys(EXIT_ENV, "cannot rename %s to %s", tmp, name);
		goto fail;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	return -1;
}

int
write_file_atomic(const char *path, const char *data, size_t len, int mode)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int dfd, rc;

	if (!slash)
		return write_file_atomic_at(AT_FDCWD, path, data, len, mode) < 0 ?
		    err_prefix("%s", path) : 0;
	if ((size_t)(slash - path) + 2 > sizeof dir || !slash[1])
		return err_set(EXIT_ENV, "bad path: %s", path);
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash == path ? 1 : slash - path] = '\0';
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return err_sys(EXIT_ENV, "cannot open directory %s", dir);
	rc = write_file_atomic_at(dfd, slash + 1, data, len, mode);
	close(dfd);
	return rc < 0 ? err_prefix("%s", dir) : 0;
}

static int
remove_at(int parent, const char *name)
{
	struct stat st;
	int fd, rc = 0;
	DIR *d;
	struct dirent *e;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : err_sys(EXIT_ENV, "cannot stat %s", name);
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(parent, name, 0) < 0 && errno != ENOENT)
			return err_sys(EXIT_ENV, "cannot remove %s", name);
		return 0;
	}
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_sys(EXIT_ENV, "cannot open %s", name);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return err_sys(EXIT_ENV, "cannot read %s", name);
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (remove_at(dirfd(d), e->d_name) < 0)
			rc = -1;
	}
	closedir(d);
	if (rc == 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return err_sys(EXIT_ENV, "cannot remove directory %s", name);
	return rc;
}

int
remove_tree(const char *path)
{
	return remove_at(AT_FDCWD, path);
}

int
remove_tree_at(int dirfd, const char *name)
{
	return remove_at(dirfd, name);
}

int
same_dir(const char *path, int fd)
{
	struct stat a, b;
	int pfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (pfd < 0)
		return err_set(EXIT_ENV, "%s is gone or no longer a directory", path), 0;
	if (fstat(pfd, &a) < 0 || fstat(fd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(pfd);
		return err_set(EXIT_ENV, "%s was replaced by another directory", path), 0;
	}
	close(pfd);
	return 1;
}

void
std_fds_open(void)
{
	for (int fd = 0; fd < 3; fd++) {
		int n;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* the lowest free number is fd itself: the ones below are open */
		n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (n >= 0 && n != fd)
			close(n);
	}
}
