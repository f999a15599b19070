/*
 * fs: the checks that keep MPS pipe directories and journals private.
 * Every directory gpupack keeps state in is opened with O_NOFOLLOW and
 * checked with fstat on the open descriptor, so that a symlink planted
 * between the check and the use is refused rather than followed.
 */
#include "util/fs.h"
#include "util/err.h"
#include "util/str.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
private_dir(const char *path)
{
	struct stat st;
	int fd;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return err_sys(EXIT_ENV, "cannot create directory %s", path);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR) {
			if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
				return err_set(EXIT_ENV, "%s is a symbolic link; refusing to use it", path);
			return err_set(EXIT_ENV, "%s is not a directory", path);
		}
		return err_sys(EXIT_ENV, "cannot open directory %s", path);
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return err_sys(EXIT_ENV, "cannot stat %s", path);
	}
	close(fd);
	if (st.st_uid != geteuid())
		return err_set(EXIT_ENV, "%s is owned by uid %u, not by you (uid %u); refusing to use it",
		    path, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 077)
		return err_set(EXIT_ENV, "%s has mode %04o, open to other users; refusing to use it "
		    "(it must be 0700)", path, (unsigned)(st.st_mode & 07777));
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
state_dir(const char *sub, char *out, size_t size)
{
	char base[PATH_MAX];

	state_base(base, sizeof base);
	if (private_dir(base) < 0)
		return err_prefix("state directory");
	if (!sub || !*sub) {
		if (str_copy(out, base, size) >= size)
			return err_set(EXIT_ENV, "state directory path too long");
		return 0;
	}
	if ((size_t)snprintf(out, size, "%s/%s", base, sub) >= size)
		return err_set(EXIT_ENV, "state directory path too long");
	/* create each component of sub in turn, each private */
	for (char *p = out + strlen(base) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (private_dir(out) < 0) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return private_dir(out);
}

int
read_file(const char *path, char **data, size_t *len)
{
	struct sbuf b;
	char chunk[8192];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return err_sys(EXIT_USAGE, "cannot open %s", path);
	sbuf_init(&b);
	while ((n = read(fd, chunk, sizeof chunk)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			sbuf_free(&b);
			return err_sys(EXIT_USAGE, "cannot read %s", path);
		}
		sbuf_addn(&b, chunk, (size_t)n);
	}
	close(fd);
	if (len)
		*len = b.len;
	*data = sbuf_detach(&b);
	return 0;
}

int
write_file_atomic(const char *path, const char *data, size_t len, int mode)
{
	char tmp[PATH_MAX];
	size_t off = 0;
	int fd;

	if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp)
		return err_set(EXIT_ENV, "path too long: %s", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return err_sys(EXIT_ENV, "cannot create %s", tmp);
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err_sys(EXIT_ENV, "cannot write %s", tmp);
			goto fail;
		}
		off += (size_t)n;
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
	if (rename(tmp, path) < 0) {
		err_sys(EXIT_ENV, "cannot rename %s to %s", tmp, path);
		goto fail;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return -1;
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
