/*
 * The sched_ext kfuncs scxkit calls, declared so one object loads on every kernel series.
 *
 * Some kernel builds (seen: 7.1.x and 7.2.x cloud) publish a scattered set of kfuncs in BTF
 * with the trailing implicit `struct bpf_prog_aux *` argument still in the prototype, so a
 * program declaring the documented prototype fails with "func_proto ... incompatible". For
 * each such kfunc we declare two weak flavours: `name___plain` (documented) and `name___aux`
 * (with the extra argument). libbpf strips the `___flavour` suffix, matches both against the
 * running kernel's BTF, and leaves the one whose prototype differs unresolved; the inline
 * `name()` below asks bpf_ksym_exists() which one resolved. The verifier removes the dead
 * branch, and for the aux flavour it supplies the real argument in place of our NULL.
 */
#ifndef __SCXKIT_KFUNCS_BPF_H
#define __SCXKIT_KFUNCS_BPF_H

#define SCXK_UNPAREN(...) __VA_ARGS__

/* A kfunc taking arguments and returning a value. */
#define SCXK_KFUNC(ret, name, params, args)                                              \
	extern ret name##___plain(SCXK_UNPAREN params) __ksym __weak;                    \
	extern ret name##___aux(SCXK_UNPAREN params, struct bpf_prog_aux *aux) __ksym __weak; \
	static __always_inline ret name(SCXK_UNPAREN params)                            \
	{                                                                                \
		if (bpf_ksym_exists(name##___plain))                                     \
			return name##___plain(SCXK_UNPAREN args);                         \
		return name##___aux(SCXK_UNPAREN args, NULL);                             \
	}

/* A kfunc taking arguments and returning nothing. */
#define SCXK_KFUNC_VOID(name, params, args)                                               \
	extern void name##___plain(SCXK_UNPAREN params) __ksym __weak;                   \
	extern void name##___aux(SCXK_UNPAREN params, struct bpf_prog_aux *aux) __ksym __weak; \
	static __always_inline void name(SCXK_UNPAREN params)                           \
	{                                                                                \
		if (bpf_ksym_exists(name##___plain))                                     \
			name##___plain(SCXK_UNPAREN args);                                \
		else                                                                     \
			name##___aux(SCXK_UNPAREN args, NULL);                            \
	}

/* A kfunc taking no argument. */
#define SCXK_KFUNC0(ret, name)                                                            \
	extern ret name##___plain(void) __ksym __weak;                                   \
	extern ret name##___aux(struct bpf_prog_aux *aux) __ksym __weak;                \
	static __always_inline ret name(void)                                            \
	{                                                                                \
		if (bpf_ksym_exists(name##___plain))                                     \
			return name##___plain();                                          \
		return name##___aux(NULL);                                                \
	}

/* Prototypes identical on every supported series (checked 6.19 to 7.3). */
s32 scx_bpf_select_cpu_dfl(struct task_struct *p, s32 prev_cpu, u64 wake_flags,
			   bool *is_idle) __ksym;
void scx_bpf_dsq_insert(struct task_struct *p, u64 dsq_id, u64 slice, u64 enq_flags) __ksym;
void scx_bpf_dsq_insert_vtime(struct task_struct *p, u64 dsq_id, u64 slice, u64 vtime,
			      u64 enq_flags) __ksym;
bool scx_bpf_dsq_move_to_local(u64 dsq_id) __ksym;
void scx_bpf_put_idle_cpumask(const struct cpumask *idle_mask) __ksym;
u32 scx_bpf_nr_cpu_ids(void) __ksym;
bool scx_bpf_task_running(const struct task_struct *p) __ksym;
s32 scx_bpf_task_cpu(const struct task_struct *p) __ksym;
s32 scx_bpf_cpu_node(s32 cpu) __ksym __weak;
u64 scx_bpf_now(void) __ksym __weak;

/* Prototypes that carry the implicit aux argument on some builds. */
SCXK_KFUNC(s32, scx_bpf_create_dsq, (u64 dsq_id, s32 node), (dsq_id, node))
SCXK_KFUNC_VOID(scx_bpf_destroy_dsq, (u64 dsq_id), (dsq_id))
SCXK_KFUNC(s32, scx_bpf_dsq_nr_queued, (u64 dsq_id), (dsq_id))
SCXK_KFUNC_VOID(scx_bpf_kick_cpu, (s32 cpu, u64 flags), (cpu, flags))
SCXK_KFUNC(s32, scx_bpf_pick_idle_cpu, (const struct cpumask *cpus_allowed, u64 flags),
	   (cpus_allowed, flags))
SCXK_KFUNC(s32, scx_bpf_pick_any_cpu, (const struct cpumask *cpus_allowed, u64 flags),
	   (cpus_allowed, flags))
SCXK_KFUNC(bool, scx_bpf_test_and_clear_cpu_idle, (s32 cpu), (cpu))
SCXK_KFUNC0(const struct cpumask *, scx_bpf_get_idle_cpumask)
SCXK_KFUNC0(const struct cpumask *, scx_bpf_get_idle_smtmask)
SCXK_KFUNC(bool, scx_bpf_task_set_slice, (struct task_struct *p, u64 slice), (p, slice))
SCXK_KFUNC(bool, scx_bpf_task_set_dsq_vtime, (struct task_struct *p, u64 vtime), (p, vtime))
SCXK_KFUNC_VOID(scx_bpf_error_bstr, (char *fmt, unsigned long long *data, u32 data__sz),
		(fmt, data, data__sz))
SCXK_KFUNC_VOID(scx_bpf_exit_bstr, (s64 exit_code, char *fmt, unsigned long long *data,
				    u32 data__sz), (exit_code, fmt, data, data__sz))
SCXK_KFUNC(u32, scx_bpf_cpuperf_cap, (s32 cpu), (cpu))

#endif /* __SCXKIT_KFUNCS_BPF_H */
