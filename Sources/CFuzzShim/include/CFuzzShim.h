#ifndef CFUZZSHIM_H
#define CFUZZSHIM_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver entry point (compiler-rt), called from the fuzz target's main.swift.
/// Declared weak so that the target still links (and says so) when built without -sanitize=fuzzer.
typedef int (*cfuzz_callback)(const uint8_t *data, size_t size);
int LLVMFuzzerRunDriver(int *argc, char ***argv, cfuzz_callback callback) __attribute__((weak));

/// True when the libFuzzer runtime is linked in.
static inline int cfuzz_driver_available(void) { return LLVMFuzzerRunDriver != 0; }
#endif
