/*
 * jobmps-driver: what gpupack_spank.so's job_prolog, task_init and
 * job_epilog call (src/slurm/jobmps.h), run by hand, without Slurm: for the
 * CLI tests against the MPS double and for tests/gpu/spank.sh against the
 * real nvidia-cuda-mps-control.
 *
 *   jobmps-driver prolog --job ID [--user NAME] [--node NAME] [--gpus LIST]
 *                        [--visible LIST] [--spec SPEC] [-- PLUGIN-ARGS...]
 *   jobmps-driver task   --job ID [--node NAME] [--visible LIST] [--step LIST]
 *                        [--spec SPEC] [-- PLUGIN-ARGS...]   (run it as the job's user;
 *                        --spec: the step's own --gpupack-mps)
 *   jobmps-driver epilog --job ID [--user NAME] [--node NAME] [-- PLUGIN-ARGS...]
 *   jobmps-driver sweep  --job ID [--node NAME] [-- PLUGIN-ARGS...]   (the prolog of a job
 *                        without MPS: what ended jobs left is removed)
 *
 * PLUGIN-ARGS are the plugstack.conf arguments (control=, state=, ...).
 * prolog and epilog print "ok", or one error line and exit 3 (bad arguments:
 * 2); task prints the variables a task gets, NAME=VALUE a line, or "none"
 * when the job has no MPS there. --user defaults to the caller.
 */
#include "slurm/jobmps.h"
#include "slurm/jobusage.h"
#include "util/err.h"
#include "util/str.h"

#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
usage(void)
{
	fprintf(stderr, "usage: jobmps-driver prolog|task|epilog|sweep|usage-start|usage-now|usage-stop --job ID [--user NAME] [--node NAME] "
	    "[--gpus LIST] [--visible LIST] [--step LIST] [--spec SPEC] [-- PLUGIN-ARGS...]\n");
	return EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	static const struct option longs[] = {
		{"job", required_argument, NULL, 'j'}, {"user", required_argument, NULL, 'u'},
		{"node", required_argument, NULL, 'n'}, {"gpus", required_argument, NULL, 'g'},
		{"visible", required_argument, NULL, 'v'}, {"step", required_argument, NULL, 's'},
		{"spec", required_argument, NULL, 'p'}, {NULL, 0, NULL, 0},
	};
	const char *what, *user = NULL, *step = NULL, *spec = NULL;
	struct jobmps_job j = {0, 0, 0, "node", NULL, NULL};
	struct jobmps_conf c;
	struct jobmps_spec sp = {0, 0, 0, MPS_PRIO_UNSET};
	struct mps_limits lim;
	int opt, rc;

	if (argc < 2)
		return usage();
	what = argv[1];
	err_set_command("spank");
	optind = 2;
	while ((opt = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (opt) {
		case 'j': j.jobid = strtoul(optarg, NULL, 10); break;
		case 'u': user = optarg; break;
		case 'n': j.node = optarg; break;
		case 'g': j.gpus = optarg; break;
		case 'v': j.visible = optarg; break;
		case 's': step = optarg; break;
		case 'p': spec = optarg; break;
		default: return usage();
		}
	}
	if (j.jobid == 0)
		return usage();
	j.uid = getuid();
	j.gid = getgid();
	if (user) {
		struct passwd *pw = getpwnam(user);

		if (!pw)
			return err_die(EXIT_USAGE, "no user %s", user);
		j.uid = pw->pw_uid;
		j.gid = pw->pw_gid;
	}
	if (jobmps_conf_parse(argc - optind, argv + optind, &c) < 0 ||
	    (spec && jobmps_spec_parse(spec, &sp) < 0) || jobmps_limits(&c, &sp, &lim) < 0)
		return err_report();
	if (strcmp(what, "prolog") == 0)
		rc = jobmps_prolog(&c, &j, &lim);
	else if (strcmp(what, "sweep") == 0)
		rc = jobmps_sweep(&c, &j) < 0 ? -1 : 0;
	else if (strcmp(what, "epilog") == 0)
		rc = jobmps_epilog(&c, &j);
	else if (strcmp(what, "usage-start") == 0) {
		rc = jobusage_start(&c, &j);
		if (rc == 1) {
			puts("none");
			return 0;
		}
	} else if (strcmp(what, "usage-stop") == 0 || strcmp(what, "usage-now") == 0) {
		char line[2048];

		rc = what[6] == 's' ? jobusage_stop(&c, &j, line, sizeof line) : jobusage_now(&c, &j, line, sizeof line);
		if (rc == 1) {
			puts("none");
			return 0;
		}
		if (rc == 0) {
			puts(line);
			return 0;
		}
	}
	else if (strcmp(what, "task") == 0) {
		struct jobmps_env e;

		rc = jobmps_task_env(&c, &j, j.visible, step, spec ? &sp : NULL, &e);
		if (rc == 1) {
			puts("none");
			return 0;
		}
		if (rc == 0) {
			for (int i = 0; i < e.n; i++)
				puts(e.set[i]);
			jobmps_env_free(&e);
			return 0;
		}
	} else
		return usage();
	if (rc < 0)
		return err_report();
	puts("ok");
	return 0;
}
