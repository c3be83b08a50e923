/* Everything a scxkit BPF scheduler includes first: kernel types, libbpf helpers, kfuncs. */
#ifndef __SCXKIT_COMMON_BPF_H
#define __SCXKIT_COMMON_BPF_H

#include "../vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "kfuncs.bpf.h"

#define BPF_STRUCT_OPS(name, args...) SEC("struct_ops/" #name) BPF_PROG(name, ##args)
#define BPF_STRUCT_OPS_SLEEPABLE(name, args...) SEC("struct_ops.s/" #name) BPF_PROG(name, ##args)

/* Values written by userspace before load land in .rodata: declare them `const volatile`. */
#define RODATA const volatile

/* Packs printf-style arguments into the u64 array a *_bstr kfunc takes. */
#define SCXK_BSTR_CALL(call, fmt, args...)                                   \
	({                                                                    \
		static char ___fmt[] = fmt;                                   \
		unsigned long long ___param[___bpf_narg(args)];               \
		_Pragma("GCC diagnostic push")                                \
		_Pragma("GCC diagnostic ignored \"-Wint-conversion\"")        \
		___bpf_fill(___param, args);                                  \
		_Pragma("GCC diagnostic pop")                                 \
		call(___fmt, ___param, sizeof(___param));                     \
	})

/* Ejects the scheduler with a formatted message (kind SCX_EXIT_ERROR_BPF). */
#define scx_bpf_error(fmt, args...) SCXK_BSTR_CALL(scx_bpf_error_bstr, fmt, ##args)

static __always_inline bool time_before(u64 a, u64 b) { return (s64)(a - b) < 0; }

static __always_inline u64 min_u64(u64 a, u64 b) { return a < b ? a : b; }
static __always_inline u64 max_u64(u64 a, u64 b) { return a > b ? a : b; }

/* Looks up slot `idx` of a per-CPU u64 counter array and adds one. */
static __always_inline void scxk_count(void *percpu_array, u32 idx)
{
	u64 *cnt = bpf_map_lookup_elem(percpu_array, &idx);

	if (cnt)
		(*cnt)++;
}

char _license[] SEC("license") = "GPL";

#endif /* __SCXKIT_COMMON_BPF_H */
