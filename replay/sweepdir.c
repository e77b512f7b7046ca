/* replay/sweepdir.c - a sweep directory's CSV lines and cell directory
 * names (sweepdir.h). */
#include "sweepdir.h"

int dmr_report_csv_split(char *line, char **fields, int max)
{
	int n = 0;
	char *p = line;
	for (;;) {
		char *start = p;
		if (*p == '"') {
			char *w = p;
			start = w;
			p++;
			for (;;) {
				if (*p == '\0')
					return -1;
				if (*p == '"') {
					if (p[1] == '"') {
						*w++ = '"';
						p += 2;
						continue;
					}
					p++;
					break;
				}
				*w++ = *p++;
			}
			if (*p != ',' && *p != '\0')
				return -1;
			char *sep = p;
			*w = '\0';
			p = sep;
		} else {
			while (*p && *p != ',')
				p++;
		}
		int last = *p == '\0';
		*p = '\0';
		if (n < max)
			fields[n] = start;
		n++;
		if (last)
			break;
		p++;
	}
	return n;
}

void dmr_sweep_cell_dirname(const char *cell, char *out, size_t out_len)
{
	size_t o = 0;
	for (const char *p = cell; *p && o + 1 < out_len; p++) {
		char c = *p;
		if (c == ';')
			c = '+';
		else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '=' || c == '+' ||
			   c == '-'))
			c = '_';
		out[o++] = c;
	}
	out[o] = '\0';
}
