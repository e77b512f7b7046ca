/*
 * replay/kvstore.h - the key/value store on a backend (issue #17 item 1;
 * docs/KVCACHE.md section 10): the store and its clients in one process
 * (dmr_kv_local_*: sim, shm, verbs loopback), the replay of a kvops trace
 * with every get checked against a reference model (dmr_kv_ops_run), and
 * the command lines `dmreplay kv set|get|del` (clients of a running `kv mn`
 * store over verbs) and `kv mn` without --trace (the store as the MN
 * process). The protocol is core/kv/store.h (master) and core/kv/api.h
 * (client).
 */
#ifndef DMR_KVSTORE_H
#define DMR_KVSTORE_H

#include <stdint.h>
#include <stdio.h>

#include "../backends/backend.h"
#include "../core/kv/api.h"
#include "../core/kv/master.h"
#include "../core/kv/pool.h"
#include "../core/kv/store.h"

/* Defaults of the store's options (kv mn, kv run of a kvops trace). */
#define DMR_KV_STORE_BLOCK (1ull << 20)	     /* --block-bytes: 1 MiB */
#define DMR_KV_STORE_CAPACITY (256ull << 20) /* --capacity: 256 MiB */

typedef struct dmr_kv_local_opts {
	const char *backend; /* sim, shm, verbs (loopback), fault:..., record:... */
	const char *profile; /* sim profile (NULL: the default) */
	const char *device;  /* verbs */
	int port, gid_index;
	uint64_t capacity; /* pool bytes (0: DMR_KV_STORE_CAPACITY) */
	uint64_t block;	   /* block bytes (0: DMR_KV_STORE_BLOCK) */
	uint64_t val_max;  /* 0: the largest the pool allows (dmr_kv_store_val_max) */
	uint32_t clients;  /* clients = workers = mailboxes (0: 1) */
	uint64_t chunk;	   /* api.h cfg.chunk */
	uint32_t depth;	   /* api.h cfg.depth */
	double timeout_s;  /* api.h cfg.timeout_s */
	uint64_t seed;
	/* dmr_kv_ops_run only: called once, with on_start_arg, when the trace
	 * was opened and the store set up (every check passed), before out_dir
	 * is made or written (NULL: none). Anything else than DMR_OK ends the
	 * run there with that status (err filled by the hook), nothing
	 * written. `kv run` on a kvops trace moves an earlier run's files
	 * aside in it (dmr_kv_out_claim), so that a refused run leaves --out
	 * as it was. */
	dmr_status_t (*on_start)(void *arg, dmr_err_t *err);
	void *on_start_arg;
} dmr_kv_local_opts_t;

/* The store and its clients in one process. On a DRIVEN backend (sim) the
 * master runs inline in the clients' waits (deterministic: the same calls
 * give the same simulated times); on threaded backends it is a thread that
 * serves the mailboxes in the MN region's local memory. Client i is worker
 * i and mailbox i; a client belongs to one thread. */
typedef struct dmr_kv_local {
	dmr_be_t *be;
	dmr_kv_pool_t pool;
	dmr_kv_store_t store;
	dmr_kv_master_t m;
	dmr_kv_layout_t lay;
	dmr_kv_store_geom_t g;
	volatile int stop;
	int threaded; /* the master is a thread */
	uint32_t nc;
	dmr_kv_cli_t *cli; /* nc clients */
} dmr_kv_local_t;

/* Open the backend (1 MN, 1 CN x clients workers, a region of the store's
 * layout), lay the store out, start the master, open the clients. Errors:
 * the backend's, DMR_ERR_RANGE (a block larger than the pool, a value limit
 * above it), DMR_ERR_UNSUPPORTED (an MN region that is not local memory:
 * use `kv mn`), DMR_ERR_NOMEM. dmr_kv_local_close either way. */
dmr_status_t dmr_kv_local_open(dmr_kv_local_t *L, const dmr_kv_local_opts_t *o, dmr_err_t *err);
/* Stop the master, close the clients and the backend. */
void dmr_kv_local_close(dmr_kv_local_t *L);
/* The pool's blocks in use and the keys mapped, read from the master's
 * state (tests): a threaded master is stopped and joined (ordering its
 * writes before these reads), then started again (ordering the reads
 * before its next writes). Errors: the thread's (its failure, or
 * DMR_ERR_NOMEM at its restart). */
dmr_status_t dmr_kv_local_state(dmr_kv_local_t *L, uint64_t *blocks_p, uint64_t *keys_p,
				dmr_err_t *err);
/* The time of client i's worker, ps (sim: simulated). */
uint64_t dmr_kv_local_now(dmr_kv_local_t *L, uint32_t i);

/* The replay of a kvops trace (traces/kvops.h). */
typedef struct dmr_kv_ops_result {
	uint64_t ops, sets, gets, dels;		 /* rows by op (a get row counts once) */
	uint64_t keys_got, hits, misses;	 /* keys of the get rows; found; not found */
	uint64_t sets_refused;			 /* FULL answers (the model keeps the old value) */
	uint64_t dels_missing;			 /* del of an absent key */
	uint64_t bytes_set, bytes_got, checked;	 /* value bytes; bytes compared with the model */
	double p50_us[4], p99_us[4], mean_us[4]; /* by op: [1] set, [2] get, [3] del */
	double time_s, wall_s;			 /* backend time first op to last; wall */
	int partial;
} dmr_kv_ops_result_t;

/*
 * Replay `trace` on a local store (o; clients 1: the rows in file order),
 * checking every answer against a reference model (key -> the row of the
 * set that wrote its value, or absent): a get must find exactly the keys
 * the model has, each value byte for byte (dmr_kvops_check) and a del
 * must find the key iff the model has it. A mismatch is DMR_ERR_VERIFY
 * naming the trace line, key and byte. A set refused FULL keeps the old
 * value in the model too. out_dir (NULL: none): summary.csv (or
 * summary.partial.csv) written atomically. Errors: the reader's, the
 * store's, DMR_ERR_VERIFY, DMR_ERR_INTERRUPTED (SIGINT/SIGTERM: partial).
 */
dmr_status_t dmr_kv_ops_run(const char *trace, const dmr_kv_local_opts_t *o, const char *out_dir,
			    dmr_kv_ops_result_t *r, dmr_err_t *err);
void dmr_kv_ops_print(const char *trace, const dmr_kv_local_opts_t *o, const dmr_kv_ops_result_t *r,
		      FILE *f);

/* `dmreplay kv set|get|del ...` (argv[0] is the command). */
int dmr_kv_store_cli_main(int argc, char **argv);
/* `dmreplay kv mn --config C` without --trace: the store as the MN process. */
int dmr_kv_store_mn_main(int argc, char **argv);
/* `dmreplay kv run --trace OPS.kvops ...` (kv run dispatches here when the
 * trace is a kvops trace) and `kv gen --kvops ...`. */
int dmr_kv_ops_run_main(int argc, char **argv);
/* Before `kv run` writes into out: finished results there (summary.csv) are
 * refused (2, the message printed) unless the command line had --force,
 * which moves them and any unfinished run's files to out/earlier-N/
 * (replay/roles.h dmr_roles_clear_earlier; moved: that directory, "" when
 * nothing moved; may be NULL); 0: go on (out absent or not a directory:
 * nothing to move, the run reports it). Called only once every check of
 * the run passed; dmr_kv_out_refused up front. replay/kv/cli.c. */
int dmr_kv_out_claim(const char *out, char *moved, size_t movedlen);
/* A kv run's hold on its --out (dmr_kv_out_hold / dmr_kv_out_release). */
typedef struct dmr_kv_out_hold {
	const char *dir;
	char lk[4096 + 16]; /* DIR/.dmr-lock */
	unsigned made;	    /* the levels of DIR's path the run made (core/base/fs.h) */
	int fd, had_lock;   /* the lock's descriptor; the lock file was there before */
} dmr_kv_out_hold_t;
/* Make --out dir (with parents; writable: dmr_kv_out_check) and hold it
 * (DIR/.dmr-lock, replay/sweepdir.h dmr_sweepdir_lock) for as long as the
 * run runs, so that a second run into it is refused at once. Returns 0, or
 * the exit status (2) with the message printed, prefixed "dmreplay CMD:",
 * and nothing of dir left that this call made. */
int dmr_kv_out_hold(dmr_kv_out_hold_t *h, const char *dir, const char *cmd);
/* Let go of the hold once the run exited with rc; a refused run (rc 2)
 * removes the lock file and the directories the hold made (kept when not
 * empty), so that it leaves --out as it was. */
void dmr_kv_out_release(dmr_kv_out_hold_t *h, int rc);
/* --out without its trailing slashes ("DIR/" is DIR: files are named
 * DIR/NAME, not DIR//NAME; "/" stays "/"): out itself when it has none,
 * else a copy in buf (len bytes; out when it does not fit). */
const char *dmr_kv_out_trim(const char *out, char *buf, size_t len);
/* The check of dmr_kv_out_claim alone, nothing moved (replay/roles.h
 * dmr_roles_earlier_refused): 2 (printed) when out holds finished results
 * and the command line had no --force, else 0. */
int dmr_kv_out_refused(const char *out);
int dmr_kv_ops_gen_main(int argc, char **argv);

#endif /* DMR_KVSTORE_H */
