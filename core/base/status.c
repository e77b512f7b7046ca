/* core/base/status.c - dmr_status_string, dmr_err_set (status.h). */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>

const char *dmr_status_string(dmr_status_t st)
{
	switch (st) {
	case DMR_OK:
		return "ok";
	case DMR_INPROGRESS:
		return "in progress";
	case DMR_EOF:
		return "end of input";
	case DMR_ERR_INVALID:
		return "invalid argument";
	case DMR_ERR_UNSUPPORTED:
		return "unsupported";
	case DMR_ERR_AGAIN:
		return "resource temporarily exhausted";
	case DMR_ERR_RANGE:
		return "out of range";
	case DMR_ERR_NOTFOUND:
		return "not found";
	case DMR_ERR_ABORT:
		return "transaction aborted";
	case DMR_ERR_FULL:
		return "table full";
	case DMR_ERR_REMOTE:
		return "remote error";
	case DMR_ERR_TIMEOUT:
		return "timeout";
	case DMR_ERR_NODEV:
		return "no such device";
	case DMR_ERR_NOMEM:
		return "out of memory";
	case DMR_ERR_IO:
		return "I/O error";
	case DMR_ERR_INTERRUPTED:
		return "interrupted";
	case DMR_ERR_WRITE:
		return "write failed";
	case DMR_ERR_PARSE:
		return "parse error";
	case DMR_ERR_VERIFY:
		return "verification failed";
	}
	return "unknown status";
}

dmr_status_t dmr_err_set(dmr_err_t *err, dmr_status_t st, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return st;
}

int dmr_exit_status(dmr_status_t st)
{
	switch (st) {
	case DMR_OK:
	case DMR_INPROGRESS:
	case DMR_EOF:
		return 0;
	case DMR_ERR_PARSE:
	case DMR_ERR_IO:
	case DMR_ERR_RANGE:
	case DMR_ERR_INVALID:
	case DMR_ERR_NODEV:
		return 2;
	case DMR_ERR_INTERRUPTED:
		return 130;
	default:
		return 1;
	}
}
