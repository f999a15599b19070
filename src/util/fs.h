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

/* Read a whole file (NUL-terminated; *len without the NUL). */
int read_file(const char *path, char **data, size_t *len);
/* Write a file through a temporary in the same directory, fsync, rename. */
int write_file_atomic(const char *path, const char *data, size_t len, int mode);
/* Remove a directory tree without following symlinks. Missing is fine. */
int remove_tree(const char *path);

#endif
