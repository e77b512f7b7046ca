/*
 * backends/ucx/ucx_mn_main.c - dmreplay-ucx-mn, the ucx backend's MN process
 * (backends/ucx/ucx.h dmr_ucx_mn_serve; docs/UCX.md "Two processes"):
 *   dmreplay-ucx-mn [--listen HOST:PORT] [--once]
 * Exit status: 0 after --once's session, 2 bad option or address, 1 failure.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "ucx.h"

int main(int argc, char **argv)
{
	const char *listen_at = "127.0.0.1:0";
	int once = 0;
	static const struct option opts[] = {{"listen", required_argument, NULL, 'l'},
					     {"once", no_argument, NULL, 'o'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
		if (c == 'l')
			listen_at = optarg;
		else if (c == 'o')
			once = 1;
		else {
			fprintf(c == 'h' ? stdout : stderr,
				"usage: dmreplay-ucx-mn [--listen HOST:PORT] [--once]\n"
				"The memory node of the ucx backend: serves one CN process at a "
				"time\n(DMR_UCX_MN=HOST:PORT dmreplay run --backend ucx ...); "
				"default --listen\n127.0.0.1:0 (an ephemeral port, printed).\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "dmreplay-ucx-mn: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	dmr_err_t err;
	dmr_status_t st = dmr_ucx_mn_serve(listen_at, once, stderr, &err);
	if (st != DMR_OK) {
		fprintf(stderr, "dmreplay-ucx-mn: %s\n", err.msg);
		return st == DMR_ERR_INVALID ? 2 : 1;
	}
	return 0;
}
