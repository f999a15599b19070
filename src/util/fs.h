/*
 * fs: private directories that cannot be hijacked, the per-user state
 * directory, and whole-file reads and atomic writes.
 */
#ifndef GPUPACK_UTIL_FS_H
#define GPUPACK_UTIL_FS_H

#include <stddef.h>

/*
 * Make sure path is a private directory: create it (0700) if absent;
 * refuse (EXIT_ENV, nothing changed) when it is a symlink, not a directory,
 * owned by another user, or open to group or others. The parent must exist.
 */
int private_dir(const char *path);

/*
 * The per-user state directory: $GPUPACK_STATE_DIR, else
 * $XDG_RUNTIME_DIR/gpupack, else /tmp/gpupack-<uid>; created private.
 * sub, when not NULL, is a path below it ("mps"), created private too.
 */
int state_dir(const char *sub, char *out, size_t size);

/* Does the state directory (or sub below it) exist? Creates nothing: for read-only commands. */
int state_exists(const char *sub);
/* The path of sub in the state directory, creating nothing. */
int state_path(const char *sub, char *out, size_t size);

/*
 * Private directories by descriptor: the same checks as private_dir, made
 * on the open descriptor, the directory opened relative to parent (a
 * directory fd, or AT_FDCWD) with O_NOFOLLOW, so that a component swapped
 * for a symlink is refused rather than followed. With create, a missing
 * one is made (0700). shown names it in messages (NULL: name). The fd
 * (O_CLOEXEC), or -1 with err set (EXIT_ENV; a missing one without create
 * has errno ENOENT).
 */
int private_dir_at(int parent, const char *name, const char *shown, int create);
/*
 * The state directory (sub below it) as a descriptor, each component opened
 * relative to the one before; out gets its path for messages and for what
 * must be named by path (MPS pipe directories). create: make what is missing.
 * -1 with err set; with create == 0, a missing one is err_code() 0 and errno ENOENT.
 */
int state_dir_fd(const char *sub, int create, char *out, size_t size);

/* The largest file read_file() reads: anything bigger is not one of ours. */
#define READ_FILE_MAX (64u << 20)
/*
 * Read a whole regular file of at most max bytes (NUL-terminated; *len
 * without the NUL). A FIFO, device or directory is refused without blocking
 * on it, and so is a larger file (EXIT_USAGE). /proc files count as regular.
 */
int read_file_max(const char *path, size_t max, char **data, size_t *len);
/* read_file_max(path, READ_FILE_MAX, ...) */
int read_file(const char *path, char **data, size_t *len);
/* The same relative to a directory fd, never following a symlink: for state files. */
int read_file_at(int dirfd, const char *name, size_t max, char **data, size_t *len);
/* write() all of buf, through short writes and EINTR; -1 with errno (ENOSPC for a write of 0). */
int write_all(int fd, const void *buf, size_t len);
/*
 * Open /dev/null on whichever of descriptors 0, 1 and 2 is closed (a
 * detached launcher's habit), so that the first files gpupack opens (the
 * farm's signalfd) do not become a task's stdout or stderr.
 */
void std_fds_open(void);
/* Write a file through a temporary in the same directory, fsync, rename. */
int write_file_atomic(const char *path, const char *data, size_t len, int mode);
/* The same inside the directory dirfd (O_NOFOLLOW, O_EXCL temporary): for state files. */
int write_file_atomic_at(int dirfd, const char *name, const char *data, size_t len, int mode);
/* Remove a directory tree without following symlinks. Missing is fine. */
int remove_tree(const char *path);
/* The same for name inside dirfd. */
int remove_tree_at(int dirfd, const char *name);
/*
 * Is path still the directory fd was opened as (same device and inode,
 * reached without a symlink)? 1 yes, 0 no (err set: what it is now).
 */
int same_dir(const char *path, int fd);

#endif
