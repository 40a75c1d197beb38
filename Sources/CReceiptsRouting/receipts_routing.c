#include "receipts_routing.h"

#include <string.h>

uint64_t receipts_routing_stable_hash(const char *conversation, size_t length) {
    const unsigned char *bytes = (const unsigned char *)conversation;
    uint64_t hash = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < length; i++) {
        hash ^= bytes[i];
        hash *= UINT64_C(0x00000100000001b3);
    }
    return hash;
}

/* Jump consistent hash of a 64-bit key into buckets (>= 1) buckets. */
static int32_t receipts_routing_jump_hash(uint64_t key, int32_t buckets) {
    int64_t bucket = -1;
    int64_t next = 0;
    while (next < buckets) {
        bucket = next;
        key = key * UINT64_C(2862933555777941757) + 1;
        next = (int64_t)((double)(bucket + 1) * ((double)(UINT64_C(1) << 31) / (double)((key >> 33) + 1)));
    }
    return (int32_t)bucket;
}

uint16_t receipts_routing_partition(const char *conversation, size_t length) {
    /* MurmurHash3's fmix64 finalizer: FNV-1a's top bits barely change when only the last
       characters of an id differ, the finalizer spreads every input bit over all 64. */
    uint64_t hash = receipts_routing_stable_hash(conversation, length);
    hash ^= hash >> 33;
    hash *= UINT64_C(0xff51afd7ed558ccd);
    hash ^= hash >> 33;
    hash *= UINT64_C(0xc4ceb9fe1a85ec53);
    hash ^= hash >> 33;
    return (uint16_t)(hash >> 48);
}

int32_t receipts_routing_owner(const char *conversation, size_t length, int32_t worker_count) {
    return receipts_routing_jump_hash(receipts_routing_stable_hash(conversation, length),
                                      worker_count < 1 ? 1 : worker_count);
}

size_t receipts_routing_topic(const char *conversation, size_t length, char *buffer, size_t capacity) {
    static const char digits[] = "0123456789abcdef";
    unsigned partition = receipts_routing_partition(conversation, length);
    char prefix[RECEIPTS_ROUTING_PARTITION_PREFIX_LENGTH] = {
        digits[(partition >> 12) & 0xf], digits[(partition >> 8) & 0xf],
        digits[(partition >> 4) & 0xf], digits[partition & 0xf], ':',
    };
    size_t total = RECEIPTS_ROUTING_PARTITION_PREFIX_LENGTH + length;
    if (capacity == 0) {
        return total;
    }
    size_t written = total < capacity - 1 ? total : capacity - 1;
    size_t from_prefix = written < sizeof prefix ? written : sizeof prefix;
    memcpy(buffer, prefix, from_prefix);
    if (written > from_prefix) {
        memcpy(buffer + from_prefix, conversation, written - from_prefix);
    }
    buffer[written] = '\0';
    return total;
}
