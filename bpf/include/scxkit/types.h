/* Fixed-width type names shared by BPF C (from vmlinux.h) and by bindgen on the host. */
#ifndef __SCXKIT_TYPES_H
#define __SCXKIT_TYPES_H

#if defined(__bpf__)
#include "../vmlinux.h"
#elif !defined(__VMLINUX_H__)
#include <stdint.h>
typedef int32_t s32;
typedef uint32_t u32;
typedef int64_t s64;
typedef uint64_t u64;
#endif

#endif /* __SCXKIT_TYPES_H */
