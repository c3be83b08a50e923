/* scx_simple: the one definition of everything shared by its BPF side and its Rust side. */
#ifndef __SCX_SIMPLE_INTF_H
#define __SCX_SIMPLE_INTF_H

#include <scxkit/types.h>

enum simple_consts {
	/* The one queue every task not placed on an idle CPU waits in. */
	SIMPLE_SHARED_DSQ = 0,
	/* Default time slice; the CLI's --slice-us default. */
	SIMPLE_SLICE_DEFAULT_US = 20000,
	/* How often idle CPUs are woken while tasks wait in the shared queue, ms. */
	SIMPLE_IDLE_WAKE_MS = 5,
	/* How often the shared queue is walked for tasks stranded by a CPU going offline, ms. */
	SIMPLE_STRANDED_SCAN_MS = 50,
	/* The shared queue goes round in about this long, ms, with slices of at least
	 * SIMPLE_MIN_SLICE_US (but no longer than --slice-us). */
	SIMPLE_QUEUE_ROUND_MS = 500,
	SIMPLE_MIN_SLICE_US = 250,
};

/* Per-CPU counters, indexes into the `stats` map. */
enum simple_stat_idx {
	/* Woke up on an idle CPU and went straight to its local queue. */
	SIMPLE_STAT_LOCAL,
	/* Went through the shared weighted-vtime queue. */
	SIMPLE_STAT_GLOBAL,
	SIMPLE_NR_STATS,
};

#endif /* __SCX_SIMPLE_INTF_H */
