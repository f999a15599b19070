/*
 * shell: which shell runs a task's command line, and when no shell is
 * needed at all.
 *
 * GNU parallel runs every line with `$SHELL -c line`, choosing the shell as
 * $PARALLEL_SHELL, else the nearest ancestor process that is a shell (the
 * one the user typed the command in), else $SHELL, else /bin/sh. gpupack
 * chooses the same way. A line that is one simple command of plain words
 * and quoted strings (what quoting inserted values gives) runs the same
 * with or without the shell, so it is exec'd directly: the shell's startup
 * is the largest cost of a short task.
 */
#ifndef GPUPACK_FARM_SHELL_H
#define GPUPACK_FARM_SHELL_H

#include <stddef.h>

/*
 * The shell's path into out[size] and its name in *from ("PARALLEL_SHELL",
 * "parent", "SHELL", "default"). -1 with err set (EXIT_USAGE) when it is
 * not a Bourne-family shell (csh, tcsh, fish, rc): parallel would quote for
 * that shell, gpupack quotes only for sh, bash, dash, ksh, zsh and kin.
 */
int shell_pick(char *out, size_t size, const char **from);

/*
 * line split into words when a Bourne shell would run it as one simple
 * command without expanding anything (plain words, '...' and "..." without
 * $ ` \), whose first word is not an assignment, a keyword or a builtin;
 * else NULL. Free with args_free-like loop (NULL-terminated, each malloc'd).
 */
char **shell_direct_argv(const char *line);
void shell_argv_free(char **argv);

/* Is name a shell keyword or builtin (in any common Bourne shell)? */
int shell_builtin(const char *name);

#endif
