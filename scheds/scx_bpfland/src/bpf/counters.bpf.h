/* scx_bpfland's counters: the per-CPU `stats` map, indexed by bpfland_stat_idx (intf.h). */
#ifndef __BPFLAND_COUNTERS_BPF_H
#define __BPFLAND_COUNTERS_BPF_H

#include <scxkit/stats.bpf.h>
#include "intf.h"

SCXK_STATS(BPFLAND_NR_STATS)

#endif /* __BPFLAND_COUNTERS_BPF_H */
