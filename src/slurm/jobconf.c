/*
 * jobconf: the plugin's arguments and a job's SPEC, parsed strictly. Sizes
 * and percentages mean what they mean for `gpupack mps start` (--sm, --mem,
 * --priority): mem is what each client may allocate, MPS is told that plus
 * a context's own share (share/mps.h).
 */
#include "slurm/jobconf.h"
#include "util/err.h"
#include "util/str.h"
#include "util/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

static const char known_args[] = "control=, state=, default=, max=, enable=, on_error=, grace=, "
    "cuda_index=, sim=";

/* One "key=value" item of a SPEC (key and value already split). */
static int
spec_item(const char *key, const char *val, struct jobmps_spec *sp)
{
	if (strcmp(key, "sm") == 0) {
		double v;

		if (parse_double(val, &v) < 0 || !(v > 0 && v <= 100))
			return err_set(EXIT_USAGE, "sm=%s: a thread percentage must be more than 0 and at "
			    "most 100", val);
		sp->sm_pct = v;
		return 0;
	}
	if (strcmp(key, "mem") == 0) {
		uint64_t v;

		if (parse_size(val, &v) < 0)
			return err_prefix("mem=%s", val);
		if (v < MIB(1))
			return err_set(EXIT_USAGE, "mem=%s: a memory limit must be at least 1M", val);
		sp->mem_bytes = v;
		return 0;
	}
	if (strcmp(key, "priority") == 0) {
		if (strcmp(val, "normal") == 0)
			sp->priority = MPS_PRIO_NORMAL;
		else if (strcmp(val, "low") == 0)
			sp->priority = MPS_PRIO_LOW;
		else
			return err_set(EXIT_USAGE, "priority=%s: want normal or low", val);
		return 0;
	}
	return err_set(EXIT_USAGE, "unknown item '%s' (known: sm=PCT, mem=SIZE, priority=normal|low, off)",
	    key);
}

/* One name among names[n]: 1 when seen before (then noted as seen). */
static int
seen_before(const char **names, int *n, int max, const char *name)
{
	for (int i = 0; i < *n; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	if (*n < max)
		names[(*n)++] = name;
	return 0;
}

int
jobmps_spec_parse(const char *s, struct jobmps_spec *out)
{
	struct jobmps_spec sp = {0, 0, 0, MPS_PRIO_UNSET};
	const char *seen[16];
	char *copy;
	int rc = 0, nseen = 0;

	if (!s)
		s = "";
	if (strlen(s) > 256)
		return err_set(EXIT_USAGE, "'%.32s...' is too long", s);
	copy = xstrdup(s);
	/* strtok_r would merge ",,": an empty item is an error, so split by hand */
	for (char *item = copy, *next; item && rc == 0; item = next) {
		char *eq;

		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		if (!*item) {
			if (next || item != copy)
				rc = err_set(EXIT_USAGE, "'%s': an empty item", s);
			break;
		}
		eq = strchr(item, '=');
		if (eq)
			*eq = '\0';
		/* "sm=10,sm=20": which one was meant? */
		if (seen_before(seen, &nseen, 16, item)) {
			rc = err_set(EXIT_USAGE, "'%s': %s%s given twice", s, item, eq ? "=" : "");
			break;
		}
		if (!eq && strcmp(item, "off") == 0) {
			sp.off = 1;
			continue;
		}
		if (!eq) {
			rc = err_set(EXIT_USAGE, "'%s' is not KEY=VALUE (known: sm=PCT, mem=SIZE, "
			    "priority=normal|low, off)", item);
			break;
		}
		rc = spec_item(item, eq + 1, &sp);
	}
	free(copy);
	if (rc == 0 && sp.off && (sp.sm_pct > 0 || sp.mem_bytes > 0 || sp.priority != MPS_PRIO_UNSET))
		rc = err_set(EXIT_USAGE, "'%s': off takes no limits", s);
	if (rc == 0)
		*out = sp;
	return rc;
}

static int
conf_path(const char *key, const char *val, char *out, size_t size)
{
	if (val[0] != '/')
		return err_set(EXIT_USAGE, "%s=%s: want an absolute path", key, val);
	if (str_copy(out, val, size) >= size)
		return err_set(EXIT_USAGE, "%s=: the path is too long", key);
	return 0;
}

static int
conf_choice(const char *key, const char *val, const char *a, const char *b, int *out)
{
	if (strcmp(val, a) == 0)
		*out = 0;
	else if (strcmp(val, b) == 0)
		*out = 1;
	else
		return err_set(EXIT_USAGE, "%s=%s: want %s or %s", key, val, a, b);
	return 0;
}

static int
conf_arg(const char *arg, struct jobmps_conf *c)
{
	const char *eq = strchr(arg, '=');
	char key[32];
	const char *val;

	if (!eq || (size_t)(eq - arg) >= sizeof key)
		return err_set(EXIT_USAGE, "unknown argument '%s' (known: %s)", arg, known_args);
	memcpy(key, arg, (size_t)(eq - arg));
	key[eq - arg] = '\0';
	val = eq + 1;
	if (strcmp(key, "control") == 0)
		return conf_path(key, val, c->control, sizeof c->control);
	if (strcmp(key, "state") == 0)
		return conf_path(key, val, c->state, sizeof c->state);
	if (strcmp(key, "sim") == 0)
		return conf_path(key, val, c->sim, sizeof c->sim);
	if (strcmp(key, "default") == 0) {
		if (jobmps_spec_parse(val, &c->def) < 0)
			return err_prefix("default=");
		if (c->def.off)
			return err_set(EXIT_USAGE, "default=off: say enable=ask instead");
		return 0;
	}
	if (strcmp(key, "max") == 0) {
		if (jobmps_spec_parse(val, &c->max) < 0)
			return err_prefix("max=");
		if (c->max.off || c->max.priority != MPS_PRIO_UNSET)
			return err_set(EXIT_USAGE, "max=%s: only sm= and mem= have a maximum", val);
		return 0;
	}
	if (strcmp(key, "enable") == 0)
		return conf_choice(key, val, "ask", "always", &c->always);
	if (strcmp(key, "on_error") == 0)
		return conf_choice(key, val, "fail", "run", &c->run_without);
	if (strcmp(key, "grace") == 0) {
		if (parse_duration(val, &c->grace) < 0 || c->grace > 3600)
			return err_set(EXIT_USAGE, "grace=%s: want a duration of at most 1h (\"10\", \"30s\")",
			    val);
		return 0;
	}
	if (strcmp(key, "cuda_index") == 0) {
		if (strcmp(val, "auto") == 0)
			c->index = JOBMPS_INDEX_AUTO;
		else if (strcmp(val, "global") == 0)
			c->index = JOBMPS_INDEX_GLOBAL;
		else if (strcmp(val, "local") == 0)
			c->index = JOBMPS_INDEX_LOCAL;
		else
			return err_set(EXIT_USAGE, "cuda_index=%s: want auto, global or local", val);
		return 0;
	}
	return err_set(EXIT_USAGE, "unknown argument '%s' (known: %s)", arg, known_args);
}

/*
 * MPS makes sockets in each daemon's pipe directory,
 * <state>/<jobid>/<device>/pipe/control_privileged, and a socket path has
 * at most 107 bytes: a job id of Slurm's default MaxJobId (8 digits) and
 * the longest device name (a GPU or MIG UUID, 40) must fit after the state
 * root (%n counted as node, "" when not known yet: the prolog checks again
 * with the node's name).
 */
#define SOCKET_TAIL (sizeof "/67043328/MIG-00000000-0000-0000-0000-000000000000/pipe/control_privileged" - 1)

int
jobmps_state_fits(const struct jobmps_conf *c, const char *node)
{
	char root[PATH_MAX];
	size_t room = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;

	if (jobmps_state_root(c, node ? node : "", root, sizeof root) < 0)
		return -1;
	if (strlen(root) + SOCKET_TAIL > room)
		return err_set(EXIT_USAGE, "state=%s: too long for MPS's socket paths (<state>/<jobid>/<device>/"
		    "pipe/control_privileged must fit in %zu bytes, which leaves %zu for the state root%s%s): "
		    "give the plugin a shorter state=", c->state, room, room - SOCKET_TAIL, node ? " on " : "",
		    node ? node : "");
	return 0;
}

int
jobmps_conf_parse(int ac, char **av, struct jobmps_conf *out)
{
	const char *seen[16];
	char keys[16][32];
	struct jobmps_conf c;
	int nseen = 0;

	memset(&c, 0, sizeof c);
	str_copy(c.state, JOBMPS_STATE_DEFAULT, sizeof c.state);
	c.def = (struct jobmps_spec){0, 0, 0, MPS_PRIO_UNSET};
	c.max = c.def;
	c.grace = JOBMPS_GRACE_DEFAULT;
	for (int i = 0; i < ac; i++) {
		const char *eq = strchr(av[i], '=');
		size_t k = eq ? (size_t)(eq - av[i]) : 0;

		if (conf_arg(av[i], &c) < 0)
			return -1;
		/* known keys only get here: short */
		if (k > 0 && k < sizeof keys[0] && nseen < 16) {
			memcpy(keys[nseen], av[i], k);
			keys[nseen][k] = '\0';
			if (seen_before(seen, &nseen, 16, keys[nseen]))
				return err_set(EXIT_USAGE, "%s= given twice ('%s'): say it once", keys[nseen], av[i]);
		}
	}
	if (jobmps_state_fits(&c, NULL) < 0)
		return -1;
	if (c.max.sm_pct > 0 && c.def.sm_pct > c.max.sm_pct)
		return err_set(EXIT_USAGE, "default sm=%g is over max sm=%g", c.def.sm_pct, c.max.sm_pct);
	if (c.max.mem_bytes > 0 && c.def.mem_bytes > c.max.mem_bytes)
		return err_set(EXIT_USAGE, "default mem= is over max mem=");
	*out = c;
	return 0;
}

int
jobmps_limits(const struct jobmps_conf *c, const struct jobmps_spec *spec, struct mps_limits *out)
{
	struct mps_limits l = {c->def.sm_pct, c->def.mem_bytes, c->def.priority};
	char a[32], b[32];

	if (spec) {
		if (spec->sm_pct > 0)
			l.sm_pct = spec->sm_pct;
		if (spec->mem_bytes > 0)
			l.mem_bytes = spec->mem_bytes;
		if (spec->priority != MPS_PRIO_UNSET)
			l.priority = spec->priority;
	}
	if (c->max.sm_pct > 0) {
		if (l.sm_pct > c->max.sm_pct)
			return err_set(EXIT_USAGE, "sm=%g is over this site's maximum sm=%g", l.sm_pct,
			    c->max.sm_pct);
		if (l.sm_pct == 0)
			l.sm_pct = c->max.sm_pct;
	}
	if (c->max.mem_bytes > 0) {
		if (l.mem_bytes > c->max.mem_bytes)
			return err_set(EXIT_USAGE, "mem=%s is over this site's maximum mem=%s",
			    format_size(l.mem_bytes, a, sizeof a), format_size(c->max.mem_bytes, b, sizeof b));
		if (l.mem_bytes == 0)
			l.mem_bytes = c->max.mem_bytes;
	}
	*out = l;
	return 0;
}

char *
jobmps_spec_format(const struct jobmps_spec *sp, char *buf, size_t size)
{
	struct sbuf b;
	char mem[32];

	sbuf_init(&b);
	if (sp->off)
		sbuf_printf(&b, "off");
	if (sp->sm_pct > 0)
		sbuf_printf(&b, "%ssm=%g", b.len ? "," : "", sp->sm_pct);
	if (sp->mem_bytes > 0)
		sbuf_printf(&b, "%smem=%s", b.len ? "," : "", format_size_mps(sp->mem_bytes, mem, sizeof mem));
	if (sp->priority != MPS_PRIO_UNSET)
		sbuf_printf(&b, "%spriority=%s", b.len ? "," : "", sp->priority == MPS_PRIO_LOW ? "low" : "normal");
	str_copy(buf, b.buf ? b.buf : "", size);
	sbuf_free(&b);
	return buf;
}

int
jobmps_state_root(const struct jobmps_conf *c, const char *node, char *out, size_t size)
{
	struct sbuf b;
	int rc = 0;

	sbuf_init(&b);
	for (const char *p = c->state; *p; p++) {
		if (p[0] == '%' && p[1] == 'n') {
			sbuf_printf(&b, "%s", node);
			p++;
		} else {
			sbuf_addc(&b, *p);
		}
	}
	if (!b.buf || str_copy(out, b.buf, size) >= size)
		rc = err_set(EXIT_USAGE, "state=%s: too long for node %s", c->state, node);
	sbuf_free(&b);
	return rc;
}
