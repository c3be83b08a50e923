/*
 * Per-task state kept by the kernel with the task (BPF_MAP_TYPE_TASK_STORAGE): freed with
 * it, no pid key to recycle, no size to pick.
 */
#ifndef __SCXKIT_TASK_STORAGE_BPF_H
#define __SCXKIT_TASK_STORAGE_BPF_H

#include "common.bpf.h"

/* Defines the task storage map `name` holding one `value_type` per task, allocated on first
 * use (bpf_task_storage_get with BPF_LOCAL_STORAGE_GET_F_CREATE). */
#define SCXK_TASK_STORAGE(name, value_type)                                  \
	struct {                                                             \
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE);                     \
		__uint(map_flags, BPF_F_NO_PREALLOC);                        \
		__type(key, int);                                            \
		__type(value, value_type);                                   \
	} name SEC(".maps")

#endif /* __SCXKIT_TASK_STORAGE_BPF_H */
