/*
 * err: one error message per failure, and the exit codes.
 *
 * A function that fails calls err_set() (or err_sys()) with the exit code the
 * failure deserves and one line saying what failed and why, then returns -1.
 * Callers that can add context use err_prefix(); the command prints the line
 * once as "gpupack: <command>: <message>" and exits with err_code().
 */
#ifndef GPUPACK_UTIL_ERR_H
#define GPUPACK_UTIL_ERR_H

enum exit_code {
	EXIT_OK = 0,
	EXIT_TASKS = 1,    /* some tasks failed (gpupack run uses GNU parallel's codes) */
	EXIT_USAGE = 2,    /* bad arguments or input */
	EXIT_ENV = 3,      /* environment: no driver, no permission, missing tool */
	EXIT_INTERNAL = 4, /* a bug or an unexpected failure */
};

/* Record a failure; always returns -1. */
int err_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Like err_set, appending ": strerror(errno)". */
int err_sys(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Put "what: " in front of the recorded message; returns -1. */
int err_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *err_msg(void);
int err_code(void);
void err_clear(void);
/* The recorded error, kept across cleanup that may record (and clear) its own. */
struct err_saved {
	int code;
	char msg[1024];
};
void err_save(struct err_saved *e);
/* Record e again; returns -1. */
int err_restore(const struct err_saved *e);

/* The running command's name, for messages ("devices", "mps start"). */
void err_set_command(const char *name);
const char *err_command(void);
/* Print "gpupack: <command>: <recorded message>" and return err_code(). */
int err_report(void);
/* Print a formatted one-line error for the current command and return code. */
int err_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A warning line: "gpupack: <command>: warning: ..." */
void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
