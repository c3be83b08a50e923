/*
 * What the BPF side records when the kernel ejects a scheduler or it exits: read by the
 * runtime (crates/scxkit-runtime) through bindgen, written by exit_info.bpf.h. One definition.
 */
#ifndef __SCXKIT_EXIT_INFO_H
#define __SCXKIT_EXIT_INFO_H

#include "types.h"

enum scxk_exit_info_sizes {
	SCXK_EXIT_REASON_LEN = 128,
	SCXK_EXIT_MSG_LEN = 1024,
	/* The kernel's debug dump is copied in chunks of this many bytes, each holding
	 * SCXK_EXIT_DUMP_CHUNK - 1 characters and a NUL; userspace sizes the dump map to
	 * --exit-dump-len (entries = len / (chunk - 1), rounded up). */
	SCXK_EXIT_DUMP_CHUNK = 1024,
	/* Bound of the copy loop: 4 MiB of dump. */
	SCXK_EXIT_DUMP_MAX_CHUNKS = 4096,
};

struct scxk_exit_info {
	/* enum scx_exit_kind; 0 while the scheduler still runs. */
	s32 kind;
	/* 1 when the kernel asks for a restart (SCX_ECODE_ACT_RESTART, e.g. CPU hotplug). */
	s32 restart;
	s64 exit_code;
	char reason[SCXK_EXIT_REASON_LEN];
	char msg[SCXK_EXIT_MSG_LEN];
};

#endif /* __SCXKIT_EXIT_INFO_H */
