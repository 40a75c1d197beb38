// libFuzzer's entry point for a program that has its own main. Its definition comes with
// -sanitize=fuzzer (deploy/fuzz.sh); plain builds only see the declaration and never call it.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test_one_input)(const uint8_t *data, size_t size));
