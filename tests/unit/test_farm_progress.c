/*
 * test_farm_progress: the --bar / --eta line (and its width on a terminal),
 * the busy share the summaries report, and -j auto's decisions in --json.
 */
#include "tap.h"
#include "farm/control.h"
#include "farm/progress.h"
#include "util/str.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static void
test_busy_share(void)
{
	struct farm_stats s = {0};
	struct group g = {0};

	s.t0 = 100;
	s.t_end = 110;
	g.busy = 2;
	is_int((int)(100 * progress_busy_share(&g, &s) + 0.5), 20, "2 s busy of 10: 20%%");
	/* tasks still running at the end: the time since busy_since counts too */
	g.running = 1;
	g.busy_since = 105;
	is_int((int)(100 * progress_busy_share(&g, &s) + 0.5), 70, "busy till the end: 2 + 5 s of 10");
	g.busy = 8;
	is_int((int)(100 * progress_busy_share(&g, &s) + 0.5), 100, "never more than the makespan");
	g.running = 0;
	is_int((int)(100 * progress_busy_share(&g, &s) + 0.5), 80, "nothing running: busy alone");
	s.t_end = s.t0;
	is_int((int)(100 * progress_busy_share(&g, &s) + 0.5), 0, "no makespan: 0");
}

/* The line without its reverse video (the bar's fill is where the escape ends). */
static void
line(struct progress *p, const struct farm_stats *s, const struct group *g, double now, const char *arg,
    char *buf, size_t size, int *fill)
{
	struct sbuf b;
	char *on, *off;

	sbuf_init(&b);
	progress_line(p, s, g, 2, now, arg, 61, &b);
	on = strstr(b.buf, "\033[7m");
	off = strstr(b.buf, "\033[0m");
	*fill = on && off ? (int)(off - on - 4) : -1;
	if (on && off) {
		memmove(off, off + 4, strlen(off + 4) + 1);
		memmove(on, on + 4, strlen(on + 4) + 1);
	}
	/* trailing blanks: the padding to the width */
	for (size_t n = strlen(b.buf); n > 0 && b.buf[n - 1] == ' '; n--)
		b.buf[n - 1] = '\0';
	str_copy(buf, b.buf, size);
	sbuf_free(&b);
}

static void
test_bar(void)
{
	struct farm_stats s = {0};
	struct progress p = {PROGRESS_BAR, 0, 0, 0, 0, 0, {0}};
	struct group g[2];
	char buf[512];
	int fill;

	memset(g, 0, sizeof g);
	g[0].cap = 2;
	g[0].jobs = 2;
	g[0].running = 1;
	g[1].cap = 0;   /* a device with no slot is not shown */
	g[1].gpu_index = 1;
	s.inputs = 3;
	s.total = 10;
	s.done = 4;
	s.failed = 1;
	s.running = 1;
	line(&p, &s, g, 10, "a b", buf, sizeof buf, &fill);
	is_str(buf, "50% 5:5=10s 1 failed [0:1/2] a b", "--bar: half done in 10 s, 5 left: 10 s more");
	is_int(fill, 30, "reverse video over half the width");
	s.done = 10;
	s.failed = 0;
	line(&p, &s, g, 20, "", buf, sizeof buf, &fill);
	is_str(buf, "100% 10:0=0s [0:1/2]", "--bar: all done");
	is_int(fill, 60, "reverse video over the whole width");
	s.total = 0;
	s.done = 1;
	line(&p, &s, g, 20, "x", buf, sizeof buf, &fill);
	is_str(buf, "1 done of >=3 [0:1/2] x", "total not known: no percentage, no estimate");
	is_int(fill, 0, "and no fill");
	s.total = 12;
	s.skipped = 2;
	s.done = 0;
	p = (struct progress){PROGRESS_BAR, 0, 0, 0, 0, 0, {0}};
	line(&p, &s, g, 20, "x", buf, sizeof buf, &fill);
	is_str(buf, "0% 0:10=0s [0:1/2] x", "skipped inputs are not counted; nothing ended: 0 s");
	s.inputs_done = 1;
	s.inputs = 12;
	s.total = 0;
	s.done = 5;
	line(&p, &s, g, 20, "x", buf, sizeof buf, &fill);
	is_str(buf, "50% 5:5=20s [0:1/2] x", "the total is known at the input's end");
	s.done = 9;
	line(&p, &s, g, 21, "x", buf, sizeof buf, &fill);
	is_str(buf, "90% 9:1=2s [0:1/2] x", "the estimate smoothed towards the average");
}

static void
test_eta(void)
{
	struct farm_stats s = {0};
	struct progress p = {PROGRESS_ETA, 0, 0, 0, 0, 0, {0}};
	struct group g[2];
	struct sbuf b;

	memset(g, 0, sizeof g);
	g[0].cap = g[1].cap = 2;
	g[0].jobs = g[1].jobs = 2;
	g[0].running = 1;
	g[0].tasks = 3;
	g[1].tasks = 1;
	g[1].gpu_index = 1;
	s.total = 8;
	s.done = 3;
	s.running = 1;
	sbuf_init(&b);
	progress_line(&p, &s, g, 2, 6, "", 200, &b);
	is_str(b.buf, "ETA: 10s Left: 5 AVG: 2.00s  0:1/2/75%/3.0s 1:0/1/25%/6.0s ",
	    "--eta: parallel's status, a device for each computer");
	sbuf_free(&b);
	p.mode = PROGRESS_PLAIN;
	sbuf_init(&b);
	progress_line(&p, &s, g, 2, 6, "", 200, &b);
	is_str(b.buf, "0:1/2/75%/3.0s 1:0/1/25%/6.0s ", "--progress: the same without the ETA");
	sbuf_free(&b);
}

static void
test_names(void)
{
	struct group g[3];
	char buf[32];

	memset(g, 0, sizeof g);
	g[1].gpu_index = 3;
	g[2].gpu_index = 3;
	progress_label(g, 3, 0, buf, sizeof buf);
	is_str(buf, "0", "a whole GPU by its index");
	progress_label(g, 3, 2, buf, sizeof buf);
	is_str(buf, "3.1", "the second MIG device of GPU 3");
	progress_dhms(3, buf, sizeof buf);
	is_str(buf, "3s", "3s");
	progress_dhms(60, buf, sizeof buf);
	is_str(buf, "1m00s", "a minute: 1m00s");
	progress_dhms(245, buf, sizeof buf);
	is_str(buf, "4m05s", "4m05s");
	progress_dhms(3540, buf, sizeof buf);
	is_str(buf, "59m00s", "59m00s");
	progress_dhms(90061, buf, sizeof buf);
	is_str(buf, "1d01h01m01s", "1d01h01m01s");
}

/*
 * The bar is as wide as the terminal stderr is on (its TIOCGWINSZ), not
 * $COLUMNS or 80: drawn here on a pseudo-terminal of 40 columns, the text
 * between the fill and the erase-to-end is 39 characters (the last column
 * is left free so that the terminal does not wrap).
 */
static void
test_width(void)
{
	struct farm_stats s = {0};
	struct progress p = {PROGRESS_BAR, 0, 0, 0, 0, 0, {0}};
	struct group g;
	struct winsize ws = {10, 40, 0, 0};
	struct termios tm;
	char buf[512], *fill, *erase;
	size_t len = 0;
	int hold, master, tty, saved;

	memset(&g, 0, sizeof g);
	unsetenv("COLUMNS");
	/* no other low descriptor is the terminal: only fd 2 can tell its width */
	hold = fcntl(3, F_GETFD) < 0 ? open("/dev/null", O_RDONLY) : -1;
	master = posix_openpt(O_RDWR | O_NOCTTY);
	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
	    (tty = open(ptsname(master), O_RDWR | O_NOCTTY)) < 0) {
		ok(1, "# skip no pseudo-terminal");
		if (master >= 0)
			close(master);
		if (hold >= 0)
			close(hold);
		return;
	}
	ioctl(tty, TIOCSWINSZ, &ws);
	/* raw: the bytes come back as drawn */
	if (tcgetattr(tty, &tm) == 0) {
		cfmakeraw(&tm);
		tcsetattr(tty, TCSANOW, &tm);
	}
	saved = dup(2);
	dup2(tty, 2);
	progress_end(&p, &s, &g, 1, 0);
	dup2(saved, 2);
	close(saved);
	while (len < sizeof buf - 1 && !memchr(buf, '\n', len)) {
		ssize_t n = read(master, buf + len, sizeof buf - 1 - len);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	fill = strstr(buf, "\033[0m");
	erase = strstr(buf, "\033[K");
	ok(fill && erase && erase - fill - 4 == 39, "a terminal 40 columns wide: the bar's text is 39 (%d)",
	    fill && erase ? (int)(erase - fill - 4) : -1);
	close(tty);
	close(master);
	if (hold >= 0)
		close(hold);
}

/* -j auto in --json: each decision's figures; only an unknown one (-1) is null, a small one is a figure */
static void
test_auto_json(void)
{
	struct farm_stats s = {0};
	struct group g;
	struct ctl c;
	struct ctl_config cfg = {2, 8, 1, 0};
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	memset(&g, 0, sizeof g);
	g.cap = 8;
	ctl_init(&c, &cfg, 0);
	c.log[c.nlog++] = (struct ctl_decision){1.5, 4, 0.5, 0.25, 0.75, 0.125, "a step"};
	g.ctl = &c;
	if (!(f = open_memstream(&text, &len))) {
		ok(0, "open_memstream");
		ctl_free(&c);
		return;
	}
	progress_json(&s, &g, 1, f);
	fclose(f);
	ok(strstr(text, "\"limit\":2,\"rate\":null,\"gpu\":null,\"cpu\":null,\"j_per_task\":null,"
	    "\"why\":\"start\"") != NULL, "the start: nothing known yet, every figure null");
	if (!ok(strstr(text, "\"limit\":4,\"rate\":0.5,\"gpu\":0.25,\"cpu\":0.75,\"j_per_task\":0.125,"
	    "\"why\":\"a step\"") != NULL, "a step: figures below 1 are figures"))
		printf("#   %s\n", text);
	free(text);
	ctl_free(&c);
}

int
main(void)
{
	test_busy_share();
	test_bar();
	test_eta();
	test_names();
	test_width();
	test_auto_json();
	return done_testing();
}
