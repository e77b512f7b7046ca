/* replay/tools/tools_util.c - what the tools share (tools_util.h). */
#include "tools_util.h"

#include <stdio.h>
#include <string.h>

#include "../../backends/backend.h"
#include "../../core/base/timeps.h"

int dmr_tools_num(const char *cmd, const dmr_tools_num_t *tab, size_t n, int ch, const char *arg)
{
	for (size_t i = 0; i < n; i++) {
		if (tab[i].ch != ch)
			continue;
		const dmr_tools_num_t *t = &tab[i];
		dmr_err_t err;
		if (dmr_opt_u64(t->name, arg, t->lo, t->hi, t->flags, t->v, &err) != DMR_OK) {
			fprintf(stderr, "dmreplay %s: %s\n", cmd, err.msg);
			return -1;
		}
		if (t->seen)
			*t->seen = 1;
		return 1;
	}
	return 0;
}

void dmr_tools_opt_error(const char *cmd, int ch, char **argv)
{
	dmr_err_t err;
	dmr_opt_refused(cmd, ch, argv, NULL, &err);
	fprintf(stderr, "dmreplay %s: %s\n", cmd, err.msg);
}

dmr_status_t dmr_tools_verbs_probe(const char *device, int port, int gid_index, uint64_t mr_size,
				   double *open_ms_p, dmr_err_t *err)
{
	dmr_be_config_t cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.backend = "verbs";
	cfg.mns = 1;
	cfg.cns = 1;
	cfg.workers = 1;
	cfg.mr_size = mr_size;
	cfg.seed = 1;
	cfg.device = device;
	cfg.port = port;
	cfg.gid_index = gid_index;
	dmr_be_t *be = NULL;
	double t0 = dmr_wall_s();
	dmr_status_t st = dmr_be_open(&cfg, &be, err);
	if (open_ms_p)
		*open_ms_p = (dmr_wall_s() - t0) * 1e3;
	if (st == DMR_OK)
		dmr_be_close(be);
	return st;
}
