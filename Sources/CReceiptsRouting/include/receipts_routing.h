/*
 * receipts_routing: the routing function of receiptd for gateways written in C (SPEC §7).
 *
 * Bit-identical to ReceiptsCore's Partitioning.swift: a gateway that routes with these
 * functions sends each conversation's events to the worker that owns it, and subscribes to
 * the exact topic that worker publishes the conversation's status updates under.
 */
#ifndef RECEIPTS_ROUTING_H
#define RECEIPTS_ROUTING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Length of a topic's partition prefix, "<4 hex digits>:"; subscribing to such a prefix follows
 * every conversation of one partition (one prefix instead of thousands of exact topics, which
 * libzmq may lose on reconnect: libzmq #2258).
 */
#define RECEIPTS_ROUTING_PARTITION_PREFIX_LENGTH 5

/*
 * FNV-1a 64 of the conversation id's bytes (UTF-8, no terminator): stable across processes,
 * platforms and languages.
 *
 * conversation: the id's bytes (may be NULL when length is 0); length: how many.
 */
uint64_t receipts_routing_stable_hash(const char *conversation, size_t length);

/*
 * The worker ordinal that owns a conversation: jump consistent hash (Lamping & Veach 2014) of
 * receipts_routing_stable_hash, so growing a StatefulSet from n-1 to n workers moves only about
 * 1/n of the conversations.
 *
 * worker_count: how many workers there are; values below 1 are treated as 1.
 * Returns an ordinal in [0, max(worker_count, 1)).
 */
int32_t receipts_routing_owner(const char *conversation, size_t length, int32_t worker_count);

/*
 * The partition of a conversation's PUB topic: the top 16 bits of receipts_routing_stable_hash
 * after MurmurHash3's fmix64 finalizer. FNV-1a alone leaves its top bits nearly unchanged when
 * only the last characters differ ("c-demo-1" ... "c-demo-6" would share one partition); the
 * finalizer spreads ids like those over all 65,536 partitions. Ownership is unaffected: it
 * uses the raw hash (receipts_routing_owner).
 */
uint16_t receipts_routing_partition(const char *conversation, size_t length);

/*
 * The PUB topic of a conversation: "<4 lowercase hex digits of receipts_routing_partition>:<conversation>".
 *
 * Like snprintf: writes at most capacity bytes including a terminating NUL (nothing when
 * capacity is 0) and returns the topic's length without the NUL, so a return value >= capacity
 * means the buffer was too small. A buffer of length + RECEIPTS_ROUTING_PARTITION_PREFIX_LENGTH
 * + 1 bytes always fits.
 *
 * The topic frame receiptd publishes is the topic and its NUL: subscribe with the returned
 * length + 1 bytes to follow this conversation exactly (ids hold no NUL), or with the returned
 * length for the topic as a prefix, which also matches ids that extend it.
 */
size_t receipts_routing_topic(const char *conversation, size_t length, char *buffer, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* RECEIPTS_ROUTING_H */
