/* doctor_docker.c - doctor's line about the Docker backend: where the
 * docker client is. No live check: the engine may be remote, slow to
 * answer or absent on a host that only prints commands (docker-command);
 * a real run is the check. */
#include <stdio.h>

#include "base/err.h"
#include "cli/cli.h"
#include "sandbox/docker_run.h"

int doctor_docker(int is_root)
{
	char client[PATH_MAX];
	struct ee_err err = { 0 };

	if (ee_docker_find(client, sizeof(client), &err) < 0) {
		printf("%-22s %-4s %s\n", "docker (client)", "no",
		       "--backend docker exits 3: no docker on PATH (Docker Engine's client, or "
		       "EXECEVAL_DOCKER)");
		return 0;
	}
	printf("%-22s %-4s %.400s\n", "docker (client)", "yes", client);
	if (!is_root)
		printf("%-22s %-4s %s\n", "docker backend", "no", "--backend docker needs root here");
	return is_root;
}
