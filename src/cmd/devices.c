/* devices: placeholder until the devices command lands. */
#include "cmd/cmd.h"
#include "util/err.h"

int
cmd_devices(int argc, char **argv, struct ctx *c)
{
	return err_die(EXIT_INTERNAL, "not built yet");
}
