#pragma once
#include <protobuf-c/protobuf-c.h>

/*
 * The address of protobuf-c's empty string: the generated `__init` functions leave it in every
 * proto3 string field, so a field that a frame does not set points at it after unpacking, not at
 * memory the unpack allocated. Swift does not import the array itself (its size is unknown).
 */
static inline const char *receipts_protobuf_c_empty_string(void) {
    return protobuf_c_empty_string;
}
