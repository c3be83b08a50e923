/* Everything a scxkit BPF scheduler includes first: kernel types, libbpf helpers, kfuncs. */
#ifndef __SCXKIT_COMMON_BPF_H
#define __SCXKIT_COMMON_BPF_H

#include "../vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "kfuncs.bpf.h"

/* errno values (vmlinux.h has no macros). */
#define ENOENT 2
#define ENOMEM 12
#define EINVAL 22

/* task_struct->flags (include/linux/sched.h). */
#define PF_KTHREAD 0x00200000

#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL

/* For what a shared header defines outside a function (maps, the license): every BPF unit of
 * a scheduler built from several (see scxkit-build) includes it, and the linker keeps one. */
#define SCXK_SHARED __weak

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

/* Exit code used when scx_bpf_error() has to fall back to scx_bpf_exit_bstr(). */
#define SCXK_ECODE_BPF_ERROR 1

/* Ejects the scheduler with a formatted message (kind SCX_EXIT_ERROR_BPF, or UNREG_BPF with
 * code SCXK_ECODE_BPF_ERROR where scx_bpf_error_bstr() cannot be called). */
#define scx_bpf_error(fmt, args...)                                                   \
	({                                                                            \
		if (scx_bpf_error_bstr_usable())                                       \
			SCXK_BSTR_CALL(scx_bpf_error_bstr, fmt, ##args);               \
		else                                                                  \
			SCXK_BSTR_CALL(scxk_exit_as_error, fmt, ##args);               \
	})

/* Adds a formatted line to the kernel's debug dump; only from ops.dump (an ejection, SysRq D). */
#define scxk_dump(fmt, args...)                                                       \
	({                                                                            \
		if (scx_bpf_dump_bstr_usable())                                        \
			SCXK_BSTR_CALL(scx_bpf_dump_bstr, fmt, ##args);                \
	})

static __always_inline void scxk_exit_as_error(char *fmt, unsigned long long *data, u32 data__sz)
{
	scx_bpf_exit_bstr(SCXK_ECODE_BPF_ERROR, fmt, data, data__sz);
}

/* Setters of the two task fields BPF may change: the kfunc where usable, else a direct write
 * (still allowed by every supported kernel, with a deprecation warning). */
static __always_inline void scxk_set_dsq_vtime(struct task_struct *p, u64 vtime)
{
	if (scx_bpf_task_set_dsq_vtime_usable())
		scx_bpf_task_set_dsq_vtime(p, vtime);
	else
		p->scx.dsq_vtime = vtime;
}

static __always_inline void scxk_set_slice(struct task_struct *p, u64 slice_ns)
{
	if (scx_bpf_task_set_slice_usable())
		scx_bpf_task_set_slice(p, slice_ns);
	else
		p->scx.slice = slice_ns;
}

/* Whether p may not leave its CPU now. A BPF program runs with migration disabled (the
 * trampoline does it), so when p is the task running this callback, one level is ours. */
static __always_inline bool scxk_migration_disabled(const struct task_struct *p)
{
	if (p == bpf_get_current_task_btf())
		return p->migration_disabled > 1;
	return p->migration_disabled;
}

/* Whether p was preempted inside an RCU read section: every RCU grace period waits until
 * it runs again and leaves the section (preemptible RCU marks it blocked). A scheduler may
 * put such a kernel thread first: khugepaged (nice 19, charged 100 times its run) preempted
 * there behind CPU hogs waited seconds for each turn, until the kernel's RCU stall report
 * ejected the scheduler. False where RCU is not preemptible. */
static __always_inline bool scxk_holds_up_rcu(const struct task_struct *p)
{
	if (!bpf_core_field_exists(p->rcu_read_unlock_special))
		return false;
	return p->rcu_read_unlock_special.b.blocked;
}

/* Whether p is a kernel thread that holds up RCU (scxk_holds_up_rcu): the tasks a scheduler
 * may put first without letting a user task buy priority. */
static __always_inline bool scxk_kthread_holds_up_rcu(const struct task_struct *p)
{
	return (p->flags & PF_KTHREAD) && scxk_holds_up_rcu(p);
}

/* Whether p is a kernel thread bound to one CPU (a per-CPU worker, ksoftirqd): it may run
 * nowhere else, and what waits for it waits on that CPU. */
static __always_inline bool scxk_is_per_cpu_kthread(const struct task_struct *p)
{
	return (p->flags & PF_KTHREAD) && p->nr_cpus_allowed == 1;
}

static __always_inline bool time_before(u64 a, u64 b) { return (s64)(a - b) < 0; }

char _license[] SEC("license") SCXK_SHARED = "GPL";

#endif /* __SCXKIT_COMMON_BPF_H */
