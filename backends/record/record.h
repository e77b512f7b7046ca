/*
 * backends/record/record.h - the recording backend: a wrapper around any
 * other backend (libfabric's prov/hook and its hook_perf provider: a
 * provider on top of another that forwards every call and observes it;
 * the pattern of backends/fault). Opened as `record:INNER` (e.g.
 * "record:shm", "record:verbs"); it forwards every call unchanged and logs
 * every WR posted and every completion polled, with dmr_be_now() of the
 * worker, to a compact binary file (the format below, docs/RECORD.md).
 * `dmreplay replay-record FILE` (replay/tools/recsim.h) feeds the recorded
 * posts to the sim and compares the latencies.
 *
 * Where the file goes: $DMR_RECORD, else "dmreplay.rec" in the current
 * directory. It is written to a temp file of the same directory
 * (core/base/fs.h dmr_afile_*: ".NAME.PID.SEQ.tmp") and renamed over NAME
 * at close, so a reader never sees half a recording and two runs never mix
 * their records; a write error is printed at close ("dmreplay: record:
 * PATH: ...") and NAME is left as it was. Open fails with DMR_ERR_IO when
 * the temp file cannot be created (err names the path).
 *
 * Cost: each worker appends to its own 64 KiB buffer (no lock); a full
 * buffer is written under one mutex. The timestamps are taken just before
 * the inner post and just after the inner poll returned, so they include
 * the wrapper's own few tens of nanoseconds per call on threaded backends.
 *
 * The format, version 1 (all integers little-endian; the writer refuses a
 * big-endian host at open):
 *   header, 64 bytes:
 *     0  magic "DMRREC01" (8 bytes)
 *     8  u32 version (1)         12 u32 header bytes (64)
 *    16  u32 record bytes (40)   20 u32 mns
 *    24  u32 cns                 28 u32 workers per CN
 *    32  u64 mr_size (bytes of each MN region)
 *    40  char inner[24]: the inner backend's name, NUL-padded
 *   then records of 40 bytes:
 *     0  u8 type: 1 post, 2 completion, 0xEE end
 *     1  u8 opcode (dmr_wr_opcode_t)
 *     2  u8 post: flags (bit 0 signaled, bit 1 not the first WR of its
 *        doorbell); completion: status (dmr_wc_status_t)
 *     3  u8 0
 *     4  u32 worker   8 u32 mn   12 u32 post: length; completion: byte_len
 *    16  u64 post: remote offset; completion: 0
 *    24  u64 time, ps (dmr_be_now of the worker)
 *    32  u64 wr_id
 *   the last record is the end record (type 0xEE): bytes 16..23 the count
 *   of records before it, 24..31 the FNV-1a 64 hash (Fowler, Noll, Vo;
 *   offset basis 14695981039346656037, prime 1099511628211) of every byte
 *   from 0 up to the end record, 32..39 the ASCII "DMRREND\0".
 * A worker's records are in its own order (its posts and polls); records
 * of different workers interleave by buffer. Completions of DMR_WR_TIMER
 * are not logged (they are no WR).
 */
#ifndef DMR_RECORD_H
#define DMR_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "../backend.h"

extern const dmr_be_ops_t dmr_record_ops;

/* The prefix that selects the wrapper in a backend name ("record:"). */
#define DMR_RECORD_PREFIX "record:"
/* Where the recording goes when $DMR_RECORD is not set. */
#define DMR_RECORD_DEFAULT "dmreplay.rec"

#define DMR_REC_MAGIC "DMRREC01"
#define DMR_REC_VERSION 1u
#define DMR_REC_HEADER_BYTES 64u
#define DMR_REC_RECORD_BYTES 40u
#define DMR_REC_POST 1u
#define DMR_REC_COMPLETION 2u
#define DMR_REC_END 0xEEu
#define DMR_REC_F_SIGNALED 0x1u
#define DMR_REC_F_CONT 0x2u /* not the first WR of its doorbell */

/* One record as read back. */
typedef struct dmr_rec_event {
	uint8_t type;	/* DMR_REC_POST or DMR_REC_COMPLETION */
	uint8_t opcode; /* dmr_wr_opcode_t */
	uint8_t aux;	/* post: DMR_REC_F_*; completion: dmr_wc_status_t */
	uint32_t worker, mn, length;
	uint64_t remote, t_ps, wr_id;
} dmr_rec_event_t;

/* A recording read into memory. */
typedef struct dmr_rec {
	uint32_t version, mns, cns, workers;
	uint64_t mr_size;
	char inner[25];
	dmr_rec_event_t *ev; /* [n], file order */
	size_t n;
} dmr_rec_t;

/*
 * Read and check the recording at path into *r (freed with dmr_rec_free).
 * Refused with DMR_ERR_PARSE, err naming the path and the byte offset: a
 * file shorter than the header or whose header is not this format
 * (magic, version, sizes, shape), a length that is not the header plus
 * whole records, a truncated file (no end record: "truncated at byte
 * offset N"), an unknown record type, a worker or MN out of the header's
 * shape, an end record whose count or hash does not match. DMR_ERR_IO:
 * cannot read; DMR_ERR_NOMEM. *r is set only on DMR_OK.
 */
dmr_status_t dmr_rec_read(const char *path, dmr_rec_t *r, dmr_err_t *err);
void dmr_rec_free(dmr_rec_t *r);

/* FNV-1a 64 of len bytes, continuing from h (start: DMR_REC_FNV_BASIS). */
#define DMR_REC_FNV_BASIS 14695981039346656037ull
uint64_t dmr_rec_fnv(uint64_t h, const void *p, size_t len);

#endif /* DMR_RECORD_H */
