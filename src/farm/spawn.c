/*
 * spawn: vfork and exec, because a farm of short tasks is bounded by how
 * fast it can start processes: vfork does not copy the parent's page
 * tables (glibc's posix_spawn does the same), and unlike posix_spawn it
 * lets the child ask for PR_SET_PDEATHSIG, so that a task dies with
 * gpupack even after kill -9. The child only makes system calls on memory
 * the parent prepared, then execs or _exits.
 *
 * PR_SET_PDEATHSIG reaches the task's first process only; its children are
 * reached through the task's process group, which gpupack signals on
 * timeouts, on a second SIGINT/SIGTERM and at its own exit.
 */
#include "farm/spawn.h"
#include "util/err.h"
#include "util/str.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

struct child_args {
	const struct spawn_req *r;
	pid_t parent;
	const char *name;
};

/*
 * Why an exec failed, in words: no strerror here (the child shares gpupack's
 * memory and must touch none of it; strerror may allocate), so a fixed table
 * of what execve can say, and the errno's name for the rest.
 */
static const char *
exec_reason(int e)
{
	switch (e) {
	case ENOENT: return "command not found";
	case EACCES: return "permission denied";
	case E2BIG: return "argument list too long (E2BIG)";
	case ENOEXEC: return "exec format error (ENOEXEC)";
	case ENOMEM: return "out of memory (ENOMEM)";
	case ETXTBSY: return "text file busy (ETXTBSY)";
	case ELOOP: return "too many levels of symbolic links (ELOOP)";
	case ENAMETOOLONG: return "file name too long (ENAMETOOLONG)";
	case ENOTDIR: return "a path component is not a directory (ENOTDIR)";
	case EISDIR: return "is a directory (EISDIR)";
	case EPERM: return "operation not permitted (EPERM)";
	case EMFILE: return "too many open files (EMFILE)";
	case ENFILE: return "too many open files in the system (ENFILE)";
	case EIO: return "input/output error (EIO)";
	case ELIBBAD: return "corrupt shared library (ELIBBAD)";
	case EINVAL: return "invalid executable (EINVAL)";
	default: {
		const char *name = strerrorname_np(e);

		return name ? name : "cannot execute";
	}
	}
}

static void
child_fail(const char *name, int e)
{
	const char *why = exec_reason(e);

	/* one line, written whole: stderr is the task's own pipe */
	struct iovec_line { const char *p; size_t n; } parts[] = {
		{"gpupack: run: ", 14}, {name, strlen(name)}, {": ", 2}, {why, strlen(why)}, {"\n", 1},
	};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		if (write(2, parts[i].p, parts[i].n) < 0)
			break;
	_exit(e == ENOENT ? 127 : 126);
}

static void __attribute__((noinline))
child(const struct child_args *a)
{
	const struct spawn_req *r = a->r;
	sigset_t none;

	sigemptyset(&none);
	/* what gpupack ignores is not the task's choice (an ignored signal survives exec) */
	signal(SIGPIPE, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != a->parent)
		_exit(127);
	if (dup2(r->fd_in, 0) < 0 || dup2(r->fd_out, 1) < 0 || dup2(r->fd_err, 2) < 0)
		child_fail(a->name, errno);
	if (r->nice)
		setpriority(PRIO_PROCESS, 0, r->nice);
	if (r->dir && chdir(r->dir) < 0)
		child_fail(r->dir, errno);
	if (!r->path)
		child_fail(a->name, ENOENT);
	execve(r->path, r->argv, r->envp);
	if (errno == ENOEXEC && r->sh_argv)
		execve(r->sh, r->sh_argv, r->envp);
	child_fail(a->name, errno);
}

pid_t
spawn_task(const struct spawn_req *r)
{
	struct child_args a = {r, getpid(), r->argv[0]};
	pid_t pid;

	pid = vfork();
	if (pid < 0)
		return err_sys(EXIT_ENV, "cannot start '%s'", r->argv[0]);
	if (pid == 0)
		child(&a);
	/* both sides set the group, so signals sent right away find it */
	setpgid(pid, pid);
	return pid;
}

static int
executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int
spawn_resolve(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH"), *p, *colon;

	if (!*name)
		return -1;
	if (strchr(name, '/')) {
		str_copy(out, name, size);
		return 0;
	}
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p = colon + 1) {
		size_t n;

		colon = strchr(p, ':');
		n = colon ? (size_t)(colon - p) : strlen(p);
		if (n == 0)
			snprintf(out, size, "%s", name);
		else
			snprintf(out, size, "%.*s/%s", (int)n, p, name);
		if (executable(out))
			return 0;
		if (!colon)
			break;
	}
	return -1;
}

static int
is_key(const char *var, const char *const *keys, int nkeys)
{
	for (int i = 0; i < nkeys; i++)
		if (strncmp(var, keys[i], strlen(keys[i])) == 0)
			return 1;
	return 0;
}

char **
spawn_env(char *const *extra, int nextra, const char *const *keys, int nkeys)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = xmalloc((n + (size_t)nextra + 1) * sizeof *env);
	for (size_t i = 0; i < n; i++)
		if (!is_key(environ[i], keys, nkeys))
			env[k++] = environ[i];
	for (int i = 0; i < nextra; i++)
		env[k++] = extra[i];
	env[k] = NULL;
	return env;
}
