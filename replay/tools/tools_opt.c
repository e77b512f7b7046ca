/* replay/tools/tools_opt.c - the tools' shared option pieces (tools_opt.h). */
#include "tools_opt.h"

#include <getopt.h>
#include <stdio.h>

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
	if (ch == ':')
		fprintf(stderr, "dmreplay %s: option %s needs a value\n", cmd, argv[optind - 1]);
	else
		fprintf(stderr, "dmreplay %s: unknown option '%s' (see dmreplay %s --help)\n", cmd,
			argv[optind - 1], cmd);
}
