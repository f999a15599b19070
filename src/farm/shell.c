/*
 * shell: the shell GNU parallel would pick, and the lines that need none
 * (see shell.h).
 */
#include "farm/shell.h"
#include "util/err.h"
#include "util/str.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* Every shell parallel recognizes in an ancestor's argv[0]. */
static const char *const shells[] = {
	"ash", "bash", "bsd-csh", "csh", "dash", "fdsh", "fish", "fizsh", "ksh", "ksh93", "lksh",
	"mksh", "pdksh", "posh", "rbash", "rc", "rush", "rzsh", "sash", "sh", "static-sh", "tcsh",
	"yash", "zsh",
};

/* Those whose quoting is not sh's. */
static const char *const foreign[] = {"bsd-csh", "csh", "tcsh", "fish", "rc", "rush"};

static int
in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, list[i]) == 0)
			return 1;
	return 0;
}

static const char *
base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The first executable name on PATH (execvp's search); 0 found. */
static int
which(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH"), *p, *colon;
	struct stat st;

	if (strchr(name, '/')) {
		str_copy(out, name, size);
		return stat(out, &st) == 0 && !S_ISDIR(st.st_mode) && access(out, X_OK) == 0 ? 0 : -1;
	}
	if (!path)
		return -1;
	for (p = path;; p = colon + 1) {
		size_t n;

		colon = strchr(p, ':');
		n = colon ? (size_t)(colon - p) : strlen(p);
		snprintf(out, size, "%.*s/%s", (int)n, p, name);
		if (stat(out, &st) == 0 && !S_ISDIR(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		if (!colon)
			return -1;
	}
}

/*
 * An ancestor's argv[0] as parallel matches it: "[-]NAME", "/path/[-]NAME",
 * "busybox NAME" or "[NAME]", alone or followed by a space and something
 * other than '('. The shell's name into name[size]; *dash when it had one.
 */
static int
shell_name(const char *argv0, char *name, size_t size, int *dash)
{
	const char *p = argv0, *end;
	size_t n;

	*dash = 0;
	if (*p == '[') {
		p++;
		if (*p == '-') {
			*dash = 1;
			p++;
		}
		end = strchr(p, ']');
		if (!end || (end[1] && !(end[1] == ' ' && end[2] != '(')))
			return -1;
	} else {
		const char *sp = strchr(p, ' ');

		if (str_starts(p, "busybox ")) {
			p += 8;
			sp = strchr(p, ' ');
		} else if (sp) {
			/* a path must not hold spaces: "-sh (sh)" is FreeBSD's sh, the rest is junk */
			if (sp[1] == '(')
				return -1;
		}
		end = sp ? sp : p + strlen(p);
		for (const char *q = p; q < end; q++)
			if (*q == '/')
				p = q + 1;
		if (*p == '-') {
			*dash = 1;
			p++;
		}
	}
	n = (size_t)(end - p);
	if (n == 0 || n >= size)
		return -1;
	memcpy(name, p, n);
	name[n] = '\0';
	return in_list(name, shells, sizeof shells / sizeof shells[0]) ? 0 : -1;
}

static int
read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

/* parallel's parent_shell: walk up from this process to the first shell. */
static int
parent_shell(char *out, size_t size)
{
	pid_t pid = getpid();

	for (int depth = 0; pid > 0 && depth < 64; depth++) {
		char path[64], buf[4096], name[64], exe[4096];
		const char *close_paren;
		int dash;
		long ppid;

		snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
		if (read_small(path, buf, sizeof buf) > 0 && shell_name(buf, name, sizeof name, &dash) == 0) {
			ssize_t n;

			if (strcmp(name, "sh") == 0 && dash) {
				/* a login "-sh": the binary says which shell it really is */
				snprintf(path, sizeof path, "/proc/%ld/exe", (long)pid);
				n = readlink(path, exe, sizeof exe - 1);
				if (n > 0) {
					exe[n] = '\0';
					if (in_list(base(exe), shells, sizeof shells / sizeof shells[0])) {
						str_copy(out, exe, size);
						return 0;
					}
				}
			}
			return which(name, out, size);
		}
		snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
		if (read_small(path, buf, sizeof buf) <= 0 || !(close_paren = strrchr(buf, ')')))
			return -1;
		if (sscanf(close_paren + 1, " %*c %ld", &ppid) != 1)
			return -1;
		pid = (pid_t)ppid;
	}
	return -1;
}

int
shell_pick(char *out, size_t size, const char **from)
{
	const char *v = getenv("PARALLEL_SHELL");

	if (v && *v) {
		*from = "PARALLEL_SHELL";
		str_copy(out, v, size);
	} else if (parent_shell(out, size) == 0) {
		*from = "parent";
	} else if ((v = getenv("SHELL")) != NULL && *v) {
		*from = "SHELL";
		str_copy(out, v, size);
	} else {
		*from = "default";
		str_copy(out, "/bin/sh", size);
	}
	if (in_list(base(out), foreign, sizeof foreign / sizeof foreign[0]))
		return err_set(EXIT_USAGE, "the shell to run command lines is %s (%s), which does not "
		    "quote as sh does: set PARALLEL_SHELL=/bin/sh (or bash)", out,
		    strcmp(*from, "parent") == 0 ? "the shell gpupack was started from" : *from);
	if (strcmp(*from, "PARALLEL_SHELL") == 0 || strcmp(*from, "SHELL") == 0) {
		char found[4096];

		if (which(out, found, sizeof found) < 0)
			return err_set(EXIT_USAGE, "shell '%s' (%s) not found", out, *from);
	}
	return 0;
}

/* ---- lines that need no shell ---------------------------------------------- */

static const char *const builtins[] = {
	"!", ".", ":", "[", "[[", "]]", "{", "}", "alias", "autoload", "bg", "bind", "break",
	"builtin", "caller", "case", "cd", "chdir", "command", "compgen", "complete", "compopt",
	"continue", "coproc", "declare", "dirs", "disable", "disown", "do", "done", "echo", "elif",
	"else", "emulate", "enable", "esac", "eval", "exec", "exit", "export", "false", "fc", "fg",
	"fi", "float", "for", "foreach", "function", "functions", "getopts", "hash", "help",
	"history", "if", "in", "integer", "jobs", "kill", "let", "limit", "local", "logout",
	"mapfile", "nocorrect", "noglob", "popd", "print", "printf", "pushd", "pwd", "read",
	"readarray", "readonly", "rehash", "repeat", "return", "select", "set", "setopt", "shift",
	"shopt", "source", "suspend", "test", "then", "time", "times", "trap", "true", "type",
	"typeset", "ulimit", "umask", "unalias", "unfunction", "unhash", "unlimit", "unset",
	"unsetopt", "until", "wait", "whence", "where", "which", "while", "zmodload",
};

int
shell_builtin(const char *name)
{
	size_t lo = 0, hi = sizeof builtins / sizeof builtins[0];

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(name, builtins[mid]);

		if (c == 0)
			return 1;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

/* A character the shell takes literally outside quotes, in every Bourne shell. */
static int
literal(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    strchr("-_./+,:@%=", c) != NULL;
}

void
shell_argv_free(char **argv)
{
	if (!argv)
		return;
	for (int i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}

/* Is an exported bash function of this name in the environment (bash would call it)? */
static int
exported_function(const char *name)
{
	size_t n = strlen(name);

	for (char **e = environ; *e; e++)
		if (str_starts(*e, "BASH_FUNC_") && strncmp(*e + 10, name, n) == 0 &&
		    (*e)[10 + n] == '%')
			return 1;
	return 0;
}

/*
 * true and false run the same as the builtins, unless asked for --help or
 * --version (coreutils' answer them); every other builtin needs the shell.
 */
static int
needs_shell(char **argv)
{
	if (strcmp(argv[0], "true") == 0 || strcmp(argv[0], "false") == 0) {
		for (int i = 1; argv[i]; i++)
			if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "--version") == 0)
				return 1;
		return 0;
	}
	return shell_builtin(argv[0]) || exported_function(argv[0]);
}

char **
shell_direct_argv(const char *line)
{
	char **argv = NULL;
	size_t n = 0, cap = 0;
	const char *p = line;
	struct sbuf w;

	sbuf_init(&w);
	while (*p == ' ')
		p++;
	while (*p) {
		int any = 0;

		/* one word: plain characters, '...' and "..." pieces */
		while (*p && *p != ' ') {
			if (*p == '\'') {
				const char *end = strchr(p + 1, '\'');

				if (!end)
					goto shell;
				sbuf_addn(&w, p + 1, (size_t)(end - p - 1));
				p = end + 1;
			} else if (*p == '"') {
				const char *q = p + 1;

				while (*q && *q != '"' && !strchr("$`\\!", *q))
					q++;
				if (*q != '"')
					goto shell;
				sbuf_addn(&w, p + 1, (size_t)(q - p - 1));
				p = q + 1;
			} else if (literal((unsigned char)*p) && !(*p == '=' && (n == 0 || !any))) {
				/* '=' in the first word is an assignment; at a word's start zsh expands it */
				sbuf_addc(&w, *p++);
			} else {
				goto shell;
			}
			any = 1;
		}
		xgrow(&argv, &cap, n + 2, sizeof *argv);
		argv[n++] = sbuf_detach(&w);
		argv[n] = NULL;
		while (*p == ' ')
			p++;
	}
	if (n == 0 || !argv[0][0] || needs_shell(argv))
		goto shell;
	sbuf_free(&w);
	return argv;
shell:
	sbuf_free(&w);
	if (argv)
		argv[n] = NULL;
	shell_argv_free(argv);
	return NULL;
}
