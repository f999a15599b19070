/*
 * test_farm_mount: the shared directory a farm over nodes refuses
 * (farm/nodes_mount.c): an NFS mount with nocto whose attribute cache
 * reaches half of GPUPACK_FARM_LOST, found in /proc/self/mountinfo's text,
 * by the mount that holds the directory (the longest mount point over it).
 */
#include "farm/nodes.h"
#include "tap.h"

#include <string.h>

/* root, an NFS mount at /shared with OPTS, and a local one inside it at /shared/local */
static const char *
info(const char *opts)
{
	static char buf[1024];

	snprintf(buf, sizeof buf,
	    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
	    "40 22 0:50 / /shared rw,relatime shared:30 - nfs4 srv:/export rw,vers=4.2,%s,addr=10.0.0.1\n"
	    "41 40 8:2 / /shared/local rw,relatime shared:31 - xfs /dev/sdb1 rw\n", opts);
	return buf;
}

int
main(void)
{
	char why[1024] = "";

	is_int(nodes_mount_check(info("hard,proto=tcp"), "/shared/runs", 60, why, sizeof why), 0,
	    "NFS with close-to-open (the default): used");
	is_int(nodes_mount_check(info("hard,nocto,proto=tcp"), "/shared/runs", 60, why, sizeof why), 1,
	    "NFS with nocto and the default attribute cache (60 s): refused");
	ok(strstr(why, "/shared/runs is on an NFS mount with nocto") && strstr(why, "mount it without nocto") &&
	    !strchr(why, '\n'), "one line naming the option that fixes it: %s", why);
	is_int(nodes_mount_check(info("hard,nocto,acregmax=10,proto=tcp"), "/shared/runs", 60, why, sizeof why), 0,
	    "nocto with acregmax=10 and GPUPACK_FARM_LOST=60: used (a beat looks at most 10 s old)");
	is_int(nodes_mount_check(info("hard,nocto,acregmax=10,proto=tcp"), "/shared/runs", 20, why, sizeof why), 1,
	    "the same with GPUPACK_FARM_LOST=20: refused");
	is_int(nodes_mount_check(info("nocto,noac"), "/shared/runs", 60, why, sizeof why), 0,
	    "nocto with noac (nothing cached): used");
	is_int(nodes_mount_check(info("nocto"), "/shared/local/runs", 60, why, sizeof why), 0,
	    "a local filesystem mounted inside the NFS one: its own mount decides");
	is_int(nodes_mount_check(info("nocto"), "/sharedx/runs", 60, why, sizeof why), 0,
	    "a path that only starts like the mount point is not under it");
	is_int(nodes_mount_check(info("nocto"), "/shared", 60, why, sizeof why), 1,
	    "the mount point itself is on it");
	is_int(nodes_mount_check(info("noctoish"), "/shared/runs", 60, why, sizeof why), 0,
	    "an option that only starts with nocto is another");
	return done_testing();
}
