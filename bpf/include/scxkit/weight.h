/*
 * Task weights, shared by BPF C and by Rust (bindgen on a scheduler's intf.h, and the twin
 * scxkit::NICE0_WEIGHT, which a test holds equal to this one).
 */
#ifndef __SCXKIT_WEIGHT_H
#define __SCXKIT_WEIGHT_H

enum scxk_weights {
	/* p->scx.weight of a nice-0 task: sched_ext scales the kernel's weights to 1-10000. */
	SCXK_NICE0_WEIGHT = 100,
};

#endif /* __SCXKIT_WEIGHT_H */
