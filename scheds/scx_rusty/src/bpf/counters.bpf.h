/* scx_rusty's counters: the per-CPU `stats` map, indexed by rusty_stat_idx (intf.h). */
#ifndef __RUSTY_COUNTERS_BPF_H
#define __RUSTY_COUNTERS_BPF_H

#include <scxkit/stats.bpf.h>
#include "intf.h"

SCXK_STATS(RUSTY_NR_STATS)

#endif /* __RUSTY_COUNTERS_BPF_H */
