/* mig: placeholder until its issue lands (replaced by the real command). */
#include "cmd/cmd.h"
#include "util/err.h"

int
cmd_mig(int argc, char **argv, struct ctx *c)
{
	return err_die(EXIT_INTERNAL, "not built yet");
}
