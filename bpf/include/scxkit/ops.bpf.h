/*
 * The struct_ops table that makes a BPF program a sched_ext scheduler, with what every
 * scxkit scheduler puts in it the same way: its name, the exit callback that records why it
 * exited for the runtime (exit_info.bpf.h), and its flags. The watchdog timeout, the
 * hotplug sequence and the exit-dump length are set by userspace before load, from the
 * options (scxkit_runtime::prepare_ops!).
 */
#ifndef __SCXKIT_OPS_BPF_H
#define __SCXKIT_OPS_BPF_H

#include "common.bpf.h"
#include "exit_info.bpf.h"

/* `.op = (void *)sched_op,` for each op named, up to 20. */
#define ___scxk_op(sched, op) .op = (void *)sched##_##op,
#define ___scxk_ops1(n, a) ___scxk_op(n, a)
#define ___scxk_ops2(n, a, ...) ___scxk_op(n, a) ___scxk_ops1(n, __VA_ARGS__)
#define ___scxk_ops3(n, a, ...) ___scxk_op(n, a) ___scxk_ops2(n, __VA_ARGS__)
#define ___scxk_ops4(n, a, ...) ___scxk_op(n, a) ___scxk_ops3(n, __VA_ARGS__)
#define ___scxk_ops5(n, a, ...) ___scxk_op(n, a) ___scxk_ops4(n, __VA_ARGS__)
#define ___scxk_ops6(n, a, ...) ___scxk_op(n, a) ___scxk_ops5(n, __VA_ARGS__)
#define ___scxk_ops7(n, a, ...) ___scxk_op(n, a) ___scxk_ops6(n, __VA_ARGS__)
#define ___scxk_ops8(n, a, ...) ___scxk_op(n, a) ___scxk_ops7(n, __VA_ARGS__)
#define ___scxk_ops9(n, a, ...) ___scxk_op(n, a) ___scxk_ops8(n, __VA_ARGS__)
#define ___scxk_ops10(n, a, ...) ___scxk_op(n, a) ___scxk_ops9(n, __VA_ARGS__)
#define ___scxk_ops11(n, a, ...) ___scxk_op(n, a) ___scxk_ops10(n, __VA_ARGS__)
#define ___scxk_ops12(n, a, ...) ___scxk_op(n, a) ___scxk_ops11(n, __VA_ARGS__)
#define ___scxk_ops13(n, a, ...) ___scxk_op(n, a) ___scxk_ops12(n, __VA_ARGS__)
#define ___scxk_ops14(n, a, ...) ___scxk_op(n, a) ___scxk_ops13(n, __VA_ARGS__)
#define ___scxk_ops15(n, a, ...) ___scxk_op(n, a) ___scxk_ops14(n, __VA_ARGS__)
#define ___scxk_ops16(n, a, ...) ___scxk_op(n, a) ___scxk_ops15(n, __VA_ARGS__)
#define ___scxk_ops17(n, a, ...) ___scxk_op(n, a) ___scxk_ops16(n, __VA_ARGS__)
#define ___scxk_ops18(n, a, ...) ___scxk_op(n, a) ___scxk_ops17(n, __VA_ARGS__)
#define ___scxk_ops19(n, a, ...) ___scxk_op(n, a) ___scxk_ops18(n, __VA_ARGS__)
#define ___scxk_ops20(n, a, ...) ___scxk_op(n, a) ___scxk_ops19(n, __VA_ARGS__)
#define ___scxk_nth(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16,  \
		    _17, _18, _19, _20, N, ...) N
#define ___scxk_nops(...) \
	___scxk_nth(__VA_ARGS__, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, \
		    3, 2, 1)
#define ___scxk_ops(sched, ...) \
	___bpf_apply(___scxk_ops, ___scxk_nops(__VA_ARGS__))(sched, __VA_ARGS__)

/*
 * Defines scheduler `sched`: its exit callback `sched_exit`, and its struct_ops table
 * `sched_ops` holding the callbacks listed, each `sched_<op>` (SCXK_OPS(simple, 0, enqueue,
 * dispatch) takes simple_enqueue and simple_dispatch), the exit callback and `flags`
 * (SCX_OPS_*).
 */
#define SCXK_OPS(sched, ops_flags, ops...)                                    \
	void BPF_STRUCT_OPS(sched##_exit, struct scx_exit_info *ei)            \
	{                                                                     \
		scxk_record_exit(ei);                                         \
	}                                                                     \
                                                                              \
	SEC(".struct_ops.link")                                               \
	struct sched_ext_ops sched##_ops = {                                   \
		___scxk_ops(sched, ops)                                        \
		.exit = (void *)sched##_exit,                                  \
		.flags = ops_flags,                                           \
		.name = #sched,                                                \
	}

#endif /* __SCXKIT_OPS_BPF_H */
