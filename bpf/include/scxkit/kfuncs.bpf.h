/*
 * The sched_ext kfuncs scxkit calls, declared so one object loads on every kernel series.
 *
 * Some kernel builds (seen: 7.1.x and 7.2.x cloud) publish about twenty kfuncs in BTF with
 * the implicit `struct bpf_prog_aux *` argument still in the public prototype and without the
 * `<name>_impl` twin that the verifier reads the full prototype from. Such a kfunc cannot be
 * called there at all:
 *  - declared with the documented prototype, libbpf refuses the object
 *    ("func_proto ... incompatible with vmlinux");
 *  - declared with the extra aux argument, libbpf resolves it but the verifier refuses every
 *    program that contains the call, reachable or not (fetch_kfunc_meta() looks up
 *    `<name>_impl` for every KF_IMPLICIT_ARGS kfunc while registering the calls):
 *      cannot find function scx_bpf_task_set_dsq_vtime_impl in BTF
 *      kernel function btf_id 104493 does not have a valid func_proto
 *
 * So each kfunc that varies is declared once, with its documented prototype, as a weak
 * symbol: where the prototype differs libbpf leaves it unresolved and turns its calls into
 * traps that only fail if reached. `name_usable()` tells which case holds; it folds to a
 * constant at load time, so the verifier drops the branch not taken. Callers check it and
 * fall back; userspace (scxkit_runtime::compat) reports the same facts from the kernel's BTF and
 * refuses to start when a kfunc without a fallback is missing.
 */
#ifndef __SCXKIT_KFUNCS_BPF_H
#define __SCXKIT_KFUNCS_BPF_H

#include "../vmlinux.h"
#include <bpf/bpf_helpers.h>

#define SCXK_UNPAREN(...) __VA_ARGS__

/* Declares `ret name(params)` as a weak kfunc and `bool name_usable(void)`. */
#define SCXK_KFUNC(ret, name, params)                                           \
	extern ret name(SCXK_UNPAREN params) __ksym __weak;                     \
	static __always_inline bool name##_usable(void)                         \
	{                                                                       \
		return bpf_ksym_exists(name);                                   \
	}

/* Prototypes identical on every supported series (checked 6.19 to 7.3). */
s32 scx_bpf_select_cpu_dfl(struct task_struct *p, s32 prev_cpu, u64 wake_flags,
			   bool *is_idle) __ksym;
void scx_bpf_dsq_insert(struct task_struct *p, u64 dsq_id, u64 slice, u64 enq_flags) __ksym;
void scx_bpf_dsq_insert_vtime(struct task_struct *p, u64 dsq_id, u64 slice, u64 vtime,
			      u64 enq_flags) __ksym;
bool scx_bpf_dsq_move_to_local(u64 dsq_id) __ksym;
/* The kernel's idle-CPU selection restricted to `cpus_allowed`; negative if none is idle. */
s32 scx_bpf_select_cpu_and(struct task_struct *p, s32 prev_cpu, u64 wake_flags,
			   const struct cpumask *cpus_allowed, u64 flags) __ksym;
void scx_bpf_put_idle_cpumask(const struct cpumask *idle_mask) __ksym;
u32 scx_bpf_nr_cpu_ids(void) __ksym;
bool scx_bpf_task_running(const struct task_struct *p) __ksym;
s32 scx_bpf_task_cpu(const struct task_struct *p) __ksym;
s32 scx_bpf_cpu_node(s32 cpu) __ksym __weak;
u64 scx_bpf_now(void) __ksym __weak;

/* Prototypes that carry the implicit aux argument on some builds: check name_usable(). */
SCXK_KFUNC(s32, scx_bpf_create_dsq, (u64 dsq_id, s32 node))
SCXK_KFUNC(void, scx_bpf_destroy_dsq, (u64 dsq_id))
SCXK_KFUNC(s32, scx_bpf_dsq_nr_queued, (u64 dsq_id))
SCXK_KFUNC(struct task_struct *, scx_bpf_dsq_peek, (u64 dsq_id))
SCXK_KFUNC(void, scx_bpf_kick_cpu, (s32 cpu, u64 flags))
SCXK_KFUNC(s32, scx_bpf_pick_idle_cpu, (const struct cpumask *cpus_allowed, u64 flags))
SCXK_KFUNC(s32, scx_bpf_pick_any_cpu, (const struct cpumask *cpus_allowed, u64 flags))
SCXK_KFUNC(bool, scx_bpf_test_and_clear_cpu_idle, (s32 cpu))
SCXK_KFUNC(const struct cpumask *, scx_bpf_get_idle_cpumask, (void))
SCXK_KFUNC(const struct cpumask *, scx_bpf_get_idle_smtmask, (void))
SCXK_KFUNC(bool, scx_bpf_task_set_slice, (struct task_struct *p, u64 slice))
SCXK_KFUNC(bool, scx_bpf_task_set_dsq_vtime, (struct task_struct *p, u64 vtime))
SCXK_KFUNC(void, scx_bpf_error_bstr, (char *fmt, unsigned long long *data, u32 data__sz))
SCXK_KFUNC(void, scx_bpf_exit_bstr, (s64 exit_code, char *fmt, unsigned long long *data,
				     u32 data__sz))
SCXK_KFUNC(void, scx_bpf_dump_bstr, (char *fmt, unsigned long long *data, u32 data__sz))
SCXK_KFUNC(u32, scx_bpf_cpuperf_cap, (s32 cpu))

#endif /* __SCXKIT_KFUNCS_BPF_H */
