/*
 * BPF cpumasks (kernel/bpf/cpumask.c kfuncs) and helpers to build them from a bitmap that
 * userspace wrote into .rodata. Generic BPF kfuncs: the same prototypes on every series.
 */
#ifndef __SCXKIT_CPUMASK_BPF_H
#define __SCXKIT_CPUMASK_BPF_H

#include "common.bpf.h"

struct bpf_cpumask *bpf_cpumask_create(void) __ksym;
void bpf_cpumask_release(struct bpf_cpumask *cpumask) __ksym;
void bpf_cpumask_set_cpu(u32 cpu, struct bpf_cpumask *cpumask) __ksym;
void bpf_cpumask_clear_cpu(u32 cpu, struct bpf_cpumask *cpumask) __ksym;
void bpf_rcu_read_lock(void) __ksym;
void bpf_rcu_read_unlock(void) __ksym;
bool bpf_cpumask_test_cpu(u32 cpu, const struct cpumask *cpumask) __ksym;
bool bpf_cpumask_intersects(const struct cpumask *src1, const struct cpumask *src2) __ksym;
u32 bpf_cpumask_any_distribute(const struct cpumask *cpumask) __ksym;
bool bpf_cpumask_empty(const struct cpumask *cpumask) __ksym;

/* Section for globals holding kptrs: must not be .bss or .data (libbpf rules). */
#define private(name) SEC(".data." #name) __hidden __attribute__((aligned(8)))

static __always_inline const struct cpumask *cast_mask(struct bpf_cpumask *mask)
{
	return (const struct cpumask *)mask;
}

static __always_inline bool bitmap_test(const volatile u64 *words, u32 nr_words, u32 bit)
{
	u32 word = bit / 64;

	return word < nr_words && (words[word] >> (bit % 64)) & 1;
}

/*
 * Creates a BPF cpumask holding the CPUs set in `words` (CPU n is bit n % 64 of word n / 64)
 * and stores it in *slot, releasing what was there. Call from a sleepable program (ops.init).
 */
#define SCXK_CPUMASK_FROM_BITMAP(slot, words, nr_cpus)                            \
	({                                                                         \
		struct bpf_cpumask *___mask = bpf_cpumask_create();                \
		s32 ___err = 0;                                                    \
		if (!___mask) {                                                    \
			___err = -ENOMEM;                                          \
		} else {                                                           \
			u32 ___cpu;                                                \
			bpf_for(___cpu, 0, (nr_cpus)) {                            \
				if (bitmap_test(words, sizeof(words) / 8, ___cpu)) \
					bpf_cpumask_set_cpu(___cpu, ___mask);      \
			}                                                          \
			___mask = bpf_kptr_xchg(&(slot), ___mask);                 \
			if (___mask)                                               \
				bpf_cpumask_release(___mask);                      \
		}                                                                  \
		___err;                                                            \
	})

#endif /* __SCXKIT_CPUMASK_BPF_H */
