/*
 * Where a callback runs: in an interrupt (a timer, a device) or on behalf of a task.
 */
#ifndef __SCXKIT_CONTEXT_BPF_H
#define __SCXKIT_CONTEXT_BPF_H

#include "common.bpf.h"

/* The CPU's preemption counter (x86 since 6.15; weak: absent elsewhere). */
extern const int __preempt_count __ksym __weak;

/* Its bits (include/linux/preempt.h): the preemption depth (0-7), softirqs served or
 * disabled (8-15: bit 8 while one is served), then the hard interrupt and NMI counts, whose
 * place moved between kernel series (from bit 16 on 6.19, bit 24 on 7.3, with other
 * interrupt bits between); x86 keeps an inverted need-resched flag in bit 31. So: serving a
 * softirq, or any bit from 16 to 30. */
#define SCXK_SOFTIRQ_OFFSET 0x100U
#define SCXK_IRQ_BITS 0x7fff0000U

/* Whether this kernel lets BPF read the preemption counter. */
static __always_inline bool scxk_context_known(void)
{
	return bpf_ksym_exists(&__preempt_count);
}

/* Whether this runs in an interrupt (hard or soft): a wakeup from here comes from a timer or
 * a device, not from a task that may go to sleep next. False where the kernel cannot tell. */
static __always_inline bool scxk_in_interrupt(void)
{
	const int *count;

	if (!scxk_context_known())
		return false;
	count = bpf_this_cpu_ptr(&__preempt_count);
	return *count & (SCXK_SOFTIRQ_OFFSET | SCXK_IRQ_BITS);
}

#endif /* __SCXKIT_CONTEXT_BPF_H */
