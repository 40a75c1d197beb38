/*
 * gateway-example: a chat gateway in C talking to receiptd through nothing but proto/ (compiled
 * by protoc-c), libprotobuf-c and libzmq, routed with CReceiptsRouting.
 *
 * Usage:
 *   gateway-example [--ingest ENDPOINT] [--publish ENDPOINT] [--conversation ID]
 *                   [--source ID] [--timeout-ms N]
 *                   [--curve-server-key FILE --curve-client-key FILE]
 *
 *   --ingest ENDPOINT     receiptd's acknowledged ingest endpoint (REQ connects there)
 *                         default: ipc://receiptd-data/ingest.sock
 *   --publish ENDPOINT    receiptd's status update endpoint (SUB connects there)
 *                         default: ipc://receiptd-data/updates.sock
 *   --conversation ID     the direct conversation to create; default: c-demo-<pid>
 *   --source ID           the event id source of this gateway; default: c-gateway-<pid>
 *   --timeout-ms N        give up after N milliseconds; default: 5000
 *   --curve-server-key FILE   receiptd's CURVE public key (receiptctl keygen's .pub): with
 *   --curve-client-key FILE   this gateway's secret key (.key), both sockets use CurveZMQ; the
 *                             key's public half must be in receiptd's gateway and reader lists
 *
 * What it does: subscribes to the conversation's topic ("<partition>:<conversation>"), waits
 * 200 ms (a new subscriber misses the first updates: the slow joiner), then sends four
 * acknowledged EventBatches of one event each, with event ids <source>/1, 2, 3, 4:
 *   1. conversation upserted: direct, members alice and bob;
 *   2. message m1 sent by alice;
 *   3. bob has m1 delivered;
 *   4. bob read m1.
 * It prints each IngestReply result and each status update of the conversation, and exits 0
 * once an update says m1 is READ. PUB may drop updates, so earlier ones may be missing; READ is
 * the success condition.
 *
 * Re-running with the same --conversation and --source re-sends the same event ids: receiptd
 * acknowledges them as DUPLICATE and changes nothing, so no update comes and the run times out.
 *
 * Exit status: 0 READ seen; 1 timeout or failure (the message says which); 2 bad usage.
 *
 * Example, against `receiptd --data-dir /tmp/rd`:
 *   gateway-example --ingest ipc:///tmp/rd/ingest.sock --publish ipc:///tmp/rd/updates.sock
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, gmtime_r, nanosleep under -std=c11 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "receipts.pb-c.h"
#include "receipts_routing.h"

/* Frames of a status update: topic, body. */
enum { UPDATE_FRAMES = 2 };

/* What the command line asks for. */
struct options {
    const char *ingest;
    const char *publish;
    const char *conversation;
    const char *source;
    long timeout_ms;
    const char *curve_server_key_file; /* NULL: plaintext */
    const char *curve_client_key_file;
};

/* Z85 CURVE keys as libzmq's options take them: 40 characters and a NUL. */
struct curve_keys {
    char server_public[41];
    char client_public[41];
    char client_secret[41];
};

/* The gateway's sockets and progress. */
struct gateway {
    void *context;
    void *ingest;  /* REQ to receiptd's acknowledged ingest ROUTER */
    void *updates; /* SUB to receiptd's status PUB */
    char *source;
    char *conversation;
    uint64_t next_sequence;
    int64_t deadline_ms; /* on the monotonic clock */
    bool saw_read;
};

static const char *const program = "gateway-example";

static char user_alice[] = "alice";
static char user_bob[] = "bob";
static char message_m1[] = "m1";

static void print_usage(FILE *stream) {
    fprintf(stream,
            "usage: %s [--ingest ENDPOINT] [--publish ENDPOINT] [--conversation ID]\n"
            "       %*s [--source ID] [--timeout-ms N]\n"
            "       %*s [--curve-server-key FILE --curve-client-key FILE]\n",
            program, (int)strlen(program), "", (int)strlen(program), "");
}

/* Parses the command line; returns 0, or the exit status to stop with. */
static int parse_options(int argc, char **argv, struct options *options) {
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "-h") == 0) {
            print_usage(stdout);
            return -1;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "%s: %s needs a value\n", program, flag);
            print_usage(stderr);
            return 2;
        }
        const char *value = argv[++i];
        if (strcmp(flag, "--ingest") == 0) {
            options->ingest = value;
        } else if (strcmp(flag, "--publish") == 0) {
            options->publish = value;
        } else if (strcmp(flag, "--conversation") == 0) {
            options->conversation = value;
        } else if (strcmp(flag, "--source") == 0) {
            options->source = value;
        } else if (strcmp(flag, "--curve-server-key") == 0) {
            options->curve_server_key_file = value;
        } else if (strcmp(flag, "--curve-client-key") == 0) {
            options->curve_client_key_file = value;
        } else if (strcmp(flag, "--timeout-ms") == 0) {
            char *end = NULL;
            errno = 0;
            long timeout = strtol(value, &end, 10);
            if (errno != 0 || end == value || *end != '\0' || timeout <= 0 || timeout > INT32_MAX) {
                fprintf(stderr, "%s: --timeout-ms wants a positive number of milliseconds, not '%s'\n",
                        program, value);
                return 2;
            }
            options->timeout_ms = timeout;
        } else {
            fprintf(stderr, "%s: unknown option '%s'\n", program, flag);
            print_usage(stderr);
            return 2;
        }
    }
    if ((options->conversation != NULL && options->conversation[0] == '\0')
        || (options->source != NULL && options->source[0] == '\0')) {
        fprintf(stderr, "%s: --conversation and --source must not be empty\n", program);
        return 2;
    }
    if ((options->curve_server_key_file == NULL) != (options->curve_client_key_file == NULL)) {
        fprintf(stderr, "%s: CURVE needs both --curve-server-key and --curve-client-key\n", program);
        return 2;
    }
    return 0;
}

/* Duplicates a string, or formats "<prefix><pid>" when it is NULL; NULL when out of memory. */
static char *copy_or_default(const char *value, const char *prefix) {
    char buffer[64];
    if (value == NULL) {
        snprintf(buffer, sizeof buffer, "%s%ld", prefix, (long)getpid());
        value = buffer;
    }
    size_t size = strlen(value) + 1;
    char *copy = malloc(size);
    if (copy != NULL) {
        memcpy(copy, value, size);
    }
    return copy;
}

static int64_t monotonic_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Reports a failed zmq call (errno set by libzmq); returns -1 for the caller to pass on. */
static int zmq_failure(const char *what) {
    fprintf(stderr, "%s: %s: %s\n", program, what, zmq_strerror(zmq_errno()));
    return -1;
}

/* The name of an enum value without its prefix ("RECEIPT_STATUS_READ" -> "READ"). */
static const char *enum_name(const ProtobufCEnumDescriptor *descriptor, int value, const char *prefix) {
    const ProtobufCEnumValue *found = protobuf_c_enum_descriptor_get_value(descriptor, value);
    if (found == NULL) {
        return "(unknown)";
    }
    size_t prefix_length = strlen(prefix);
    return strncmp(found->name, prefix, prefix_length) == 0 ? found->name + prefix_length : found->name;
}

/* Formats a time in milliseconds since the epoch as ISO 8601 UTC, or "-" when absent (0). */
static void format_time(int64_t ms, char *buffer, size_t capacity) {
    if (ms == 0) {
        snprintf(buffer, capacity, "-");
        return;
    }
    time_t seconds = (time_t)(ms / 1000);
    struct tm utc;
    if (gmtime_r(&seconds, &utc) == NULL) {
        snprintf(buffer, capacity, "%" PRId64 "ms", ms);
        return;
    }
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc);
    snprintf(buffer, capacity, "%s.%03dZ", date, (int)(ms % 1000));
}

static int set_int_option(void *socket, int option, int value, const char *what) {
    if (zmq_setsockopt(socket, option, &value, sizeof value) != 0) {
        return zmq_failure(what);
    }
    return 0;
}

/* Reads the key of a key file (the first word of the first line that is neither empty nor a
 * '#' comment) into key[41]; returns 0, or -1 after saying which file is bad (never its content). */
static int read_key(const char *path, char key[41]) {
    FILE *file = fopen(path, "r");
    if (file == NULL) {
        fprintf(stderr, "%s: cannot open %s: %s\n", program, path, strerror(errno));
        return -1;
    }
    char line[256];
    int status = -1;
    while (fgets(line, sizeof line, file) != NULL) {
        char *start = line + strspn(line, " \t");
        if (*start == '#' || *start == '\n' || *start == '\0') {
            continue;
        }
        size_t length = strcspn(start, " \t\r\n");
        uint8_t decoded[32];
        if (length == 40) {
            memcpy(key, start, 40);
            key[40] = '\0';
            status = zmq_z85_decode(decoded, key) != NULL ? 0 : -1;
        }
        break;
    }
    fclose(file);
    if (status != 0) {
        fprintf(stderr, "%s: %s holds no Z85 CURVE key\n", program, path);
    }
    return status;
}

/* Loads the server's public key and this gateway's key pair from the two key files. */
static int load_curve_keys(const struct options *options, struct curve_keys *keys) {
    if (read_key(options->curve_server_key_file, keys->server_public) != 0
        || read_key(options->curve_client_key_file, keys->client_secret) != 0) {
        return -1;
    }
    if (zmq_curve_public(keys->client_public, keys->client_secret) != 0) {
        return zmq_failure("zmq_curve_public");
    }
    return 0;
}

/* Makes a socket a CURVE client of receiptd (before it connects). */
static int set_curve_client(void *socket, const struct curve_keys *keys) {
    if (zmq_setsockopt(socket, ZMQ_CURVE_SERVERKEY, keys->server_public, 41) != 0
        || zmq_setsockopt(socket, ZMQ_CURVE_PUBLICKEY, keys->client_public, 41) != 0
        || zmq_setsockopt(socket, ZMQ_CURVE_SECRETKEY, keys->client_secret, 41) != 0) {
        return zmq_failure("zmq_setsockopt(CURVE)");
    }
    return 0;
}

/* Creates the context, subscribes to the conversation's topic and connects both sockets. */
static int gateway_open(struct gateway *gateway, const struct options *options) {
    size_t length = strlen(gateway->conversation);
    size_t capacity = length + RECEIPTS_ROUTING_PARTITION_PREFIX_LENGTH + 1;
    char *topic = malloc(capacity);
    if (topic == NULL) {
        fprintf(stderr, "%s: out of memory\n", program);
        return -1;
    }
    size_t topic_length = receipts_routing_topic(gateway->conversation, length, topic, capacity);
    printf("conversation %s: topic %s, stable hash %016" PRIx64 "\n", gateway->conversation, topic,
           receipts_routing_stable_hash(gateway->conversation, length));

    int status = -1;
    struct curve_keys keys;
    bool curve = options->curve_server_key_file != NULL;
    if (curve && load_curve_keys(options, &keys) != 0) {
        goto done;
    }
    gateway->context = zmq_ctx_new();
    if (gateway->context == NULL) {
        zmq_failure("zmq_ctx_new");
        goto done;
    }
    gateway->updates = zmq_socket(gateway->context, ZMQ_SUB);
    if (gateway->updates == NULL) {
        zmq_failure("zmq_socket(SUB)");
        goto done;
    }
    /* zmq_ctx_term waits for unsent messages unless linger is set: never hang on exit. */
    if (set_int_option(gateway->updates, ZMQ_LINGER, 0, "zmq_setsockopt(SUB, LINGER)") != 0) {
        goto done;
    }
    /* The whole topic frame, its NUL included: this conversation only, not ids extending it. */
    if (zmq_setsockopt(gateway->updates, ZMQ_SUBSCRIBE, topic, topic_length + 1) != 0) {
        zmq_failure("zmq_setsockopt(SUB, SUBSCRIBE)");
        goto done;
    }
    if (curve && set_curve_client(gateway->updates, &keys) != 0) {
        goto done;
    }
    if (zmq_connect(gateway->updates, options->publish) != 0) {
        zmq_failure("zmq_connect(SUB)");
        goto done;
    }
    gateway->ingest = zmq_socket(gateway->context, ZMQ_REQ);
    if (gateway->ingest == NULL) {
        zmq_failure("zmq_socket(REQ)");
        goto done;
    }
    if (set_int_option(gateway->ingest, ZMQ_LINGER, 0, "zmq_setsockopt(REQ, LINGER)") != 0
        || set_int_option(gateway->ingest, ZMQ_SNDTIMEO, (int)options->timeout_ms,
                          "zmq_setsockopt(REQ, SNDTIMEO)") != 0) {
        goto done;
    }
    if (curve && set_curve_client(gateway->ingest, &keys) != 0) {
        goto done;
    }
    if (zmq_connect(gateway->ingest, options->ingest) != 0) {
        zmq_failure("zmq_connect(REQ)");
        goto done;
    }
    status = 0;
done:
    free(topic);
    return status;
}

static void gateway_close(struct gateway *gateway) {
    if (gateway->ingest != NULL && zmq_close(gateway->ingest) != 0) {
        zmq_failure("zmq_close(REQ)");
    }
    if (gateway->updates != NULL && zmq_close(gateway->updates) != 0) {
        zmq_failure("zmq_close(SUB)");
    }
    if (gateway->context != NULL) {
        while (zmq_ctx_term(gateway->context) != 0) {
            if (zmq_errno() != EINTR) {
                zmq_failure("zmq_ctx_term");
                break;
            }
        }
    }
    free(gateway->source);
    free(gateway->conversation);
}

/* Sleeps, resuming after signals, so the subscription reaches the publisher before updates flow. */
static void sleep_ms(long ms) {
    struct timespec rest = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };
    while (nanosleep(&rest, &rest) != 0 && errno == EINTR) {
    }
}

/*
 * Receives every frame of one message, keeping up to capacity of them (the rest are read and
 * dropped so the socket stays aligned on message boundaries). Returns the frame count, or -1.
 * The caller closes the first min(count, capacity) frames.
 */
static int receive_message(void *socket, zmq_msg_t *frames, int capacity, const char *what) {
    int count = 0;
    for (;;) {
        zmq_msg_t frame;
        if (zmq_msg_init(&frame) != 0) {
            zmq_failure("zmq_msg_init");
            goto fail;
        }
        while (zmq_msg_recv(&frame, socket, 0) < 0) {
            if (zmq_errno() != EINTR) {
                zmq_failure(what);
                zmq_msg_close(&frame);
                goto fail;
            }
        }
        bool more = zmq_msg_more(&frame) != 0;
        if (count < capacity) {
            frames[count] = frame;
        } else {
            zmq_msg_close(&frame);
        }
        count++;
        if (!more) {
            return count;
        }
    }
fail:
    for (int i = 0; i < count && i < capacity; i++) {
        zmq_msg_close(&frames[i]);
    }
    return -1;
}

/* Receives and prints one status update; notes READ of m1. Returns 0, or -1 on a socket error. */
static int receive_update(struct gateway *gateway) {
    zmq_msg_t frames[UPDATE_FRAMES];
    int count = receive_message(gateway->updates, frames, UPDATE_FRAMES, "zmq_msg_recv(SUB)");
    if (count < 0) {
        return -1;
    }
    if (count != UPDATE_FRAMES) {
        fprintf(stderr, "%s: ignored a status message of %d frames (expected %d)\n", program, count,
                UPDATE_FRAMES);
    } else {
        Receipts__V1__StatusUpdate *update = receipts__v1__status_update__unpack(
            NULL, zmq_msg_size(&frames[1]), zmq_msg_data(&frames[1]));
        if (update == NULL) {
            fprintf(stderr, "%s: ignored an undecodable status update (%zu bytes)\n", program,
                    zmq_msg_size(&frames[1]));
        } else if (update->status == NULL) {
            fprintf(stderr, "%s: ignored a status update without a status\n", program);
        } else if (strcmp(update->status->conversation_id, gateway->conversation) == 0) {
            const Receipts__V1__MessageStatus *status = update->status;
            char read_at[48];
            format_time(status->read_at_ms, read_at, sizeof read_at);
            printf("update  seq %" PRIu64 "  message %s  %s  delivered %" PRIu32 "/%" PRIu32
                   "  read %" PRIu32 "/%" PRIu32 "  read_at %s\n",
                   update->sequence, status->message_id,
                   enum_name(&receipts__v1__receipt_status__descriptor, (int)status->status,
                             "RECEIPT_STATUS_"),
                   status->delivered_count, status->recipient_count, status->read_count,
                   status->recipient_count, read_at);
            if (status->status == RECEIPTS__V1__RECEIPT_STATUS__RECEIPT_STATUS_READ
                && strcmp(status->message_id, message_m1) == 0) {
                gateway->saw_read = true;
            }
        }
        if (update != NULL) {
            receipts__v1__status_update__free_unpacked(update, NULL);
        }
    }
    for (int i = 0; i < count && i < UPDATE_FRAMES; i++) {
        zmq_msg_close(&frames[i]);
    }
    return 0;
}

/* Prints an IngestReply. Returns 0, or -1 when it is undecodable or refuses the frame. */
static int print_reply(zmq_msg_t *frame, const char *label) {
    Receipts__V1__IngestReply *reply = receipts__v1__ingest_reply__unpack(
        NULL, zmq_msg_size(frame), zmq_msg_data(frame));
    if (reply == NULL) {
        fprintf(stderr, "%s: %s: undecodable IngestReply (%zu bytes)\n", program, label,
                zmq_msg_size(frame));
        return -1;
    }
    int status = 0;
    if (reply->error != NULL) {
        printf("ingest  %-24s refused: %s: %s\n", label,
               enum_name(&receipts__v1__error_code__descriptor, (int)reply->error->code, "ERROR_CODE_"),
               reply->error->message);
        status = -1;
    } else if (reply->n_results != 1) {
        fprintf(stderr, "%s: %s: %zu results for one event\n", program, label, reply->n_results);
        status = -1;
    } else {
        const Receipts__V1__EventResult *result = reply->results[0];
        printf("ingest  %-24s %s", label,
               enum_name(&receipts__v1__event_outcome__descriptor, (int)result->outcome, "EVENT_OUTCOME_"));
        if (result->outcome == RECEIPTS__V1__EVENT_OUTCOME__EVENT_OUTCOME_REJECTED) {
            printf(": %s", enum_name(&receipts__v1__reject_reason__descriptor, (int)result->reason,
                                     "REJECT_REASON_"));
            if (result->reason == RECEIPTS__V1__REJECT_REASON__REJECT_REASON_NOT_OWNER) {
                printf(" (owner: worker %" PRIu32 ")", result->owner_worker);
            }
            if (result->detail[0] != '\0') {
                printf(" (%s)", result->detail);
            }
        }
        if (result->held) {
            printf(" (held until its message arrives)");
        }
        printf("\n");
    }
    receipts__v1__ingest_reply__free_unpacked(reply, NULL);
    return status;
}

/*
 * Waits until the REQ socket has its reply, printing status updates meanwhile.
 * Returns 1 when readable, 0 on timeout, -1 on error.
 */
static int wait_for_reply(struct gateway *gateway) {
    for (;;) {
        int64_t remaining = gateway->deadline_ms - monotonic_ms();
        if (remaining <= 0) {
            return 0;
        }
        zmq_pollitem_t items[] = {
            { .socket = gateway->ingest, .events = ZMQ_POLLIN },
            { .socket = gateway->updates, .events = ZMQ_POLLIN },
        };
        if (zmq_poll(items, 2, (long)remaining) < 0) {
            if (zmq_errno() == EINTR) {
                continue;
            }
            return zmq_failure("zmq_poll");
        }
        if ((items[1].revents & ZMQ_POLLIN) != 0 && receive_update(gateway) != 0) {
            return -1;
        }
        if ((items[0].revents & ZMQ_POLLIN) != 0) {
            return 1;
        }
    }
}

/*
 * Sends one event as an acknowledged batch with the next event id and prints the reply.
 * Returns 0, or -1 on failure or timeout.
 */
static int send_event(struct gateway *gateway, Receipts__V1__Event *event, const char *label) {
    Receipts__V1__EventId id = RECEIPTS__V1__EVENT_ID__INIT;
    id.source = gateway->source;
    id.sequence = gateway->next_sequence++;
    event->id = &id;
    Receipts__V1__EventBatch batch = RECEIPTS__V1__EVENT_BATCH__INIT;
    batch.n_events = 1;
    batch.events = &event;

    zmq_msg_t request;
    if (zmq_msg_init_size(&request, receipts__v1__event_batch__get_packed_size(&batch)) != 0) {
        return zmq_failure("zmq_msg_init_size");
    }
    receipts__v1__event_batch__pack(&batch, zmq_msg_data(&request));
    event->id = NULL; /* id lives on this stack frame */
    while (zmq_msg_send(&request, gateway->ingest, 0) < 0) {
        if (zmq_errno() != EINTR) {
            zmq_failure("zmq_msg_send(REQ)");
            zmq_msg_close(&request);
            return -1;
        }
    }

    int ready = wait_for_reply(gateway);
    if (ready <= 0) {
        if (ready == 0) {
            fprintf(stderr, "%s: no reply to %s within the timeout: is receiptd running?\n", program, label);
        }
        return -1;
    }
    zmq_msg_t frame;
    int count = receive_message(gateway->ingest, &frame, 1, "zmq_msg_recv(REQ)");
    if (count < 0) {
        return -1;
    }
    int status = count == 1 ? print_reply(&frame, label) : -1;
    if (count != 1) {
        fprintf(stderr, "%s: %s: a reply of %d frames (expected 1)\n", program, label, count);
    }
    zmq_msg_close(&frame);
    return status;
}

/* The demo: create the conversation, send m1, deliver and read it, each acknowledged. */
static int send_events(struct gateway *gateway) {
    char *members[] = { user_alice, user_bob };

    Receipts__V1__ConversationUpserted upserted = RECEIPTS__V1__CONVERSATION_UPSERTED__INIT;
    upserted.conversation_id = gateway->conversation;
    upserted.kind = RECEIPTS__V1__CONVERSATION_KIND__CONVERSATION_KIND_DIRECT;
    upserted.n_member_ids = 2;
    upserted.member_ids = members;
    Receipts__V1__Event event = RECEIPTS__V1__EVENT__INIT;
    event.kind_case = RECEIPTS__V1__EVENT__KIND_CONVERSATION_UPSERTED;
    event.conversation_upserted = &upserted;
    if (send_event(gateway, &event, "conversation upserted") != 0) {
        return -1;
    }

    Receipts__V1__MessageSent sent = RECEIPTS__V1__MESSAGE_SENT__INIT;
    sent.conversation_id = gateway->conversation;
    sent.message_id = message_m1;
    sent.sender_id = user_alice;
    event = (Receipts__V1__Event)RECEIPTS__V1__EVENT__INIT;
    event.kind_case = RECEIPTS__V1__EVENT__KIND_MESSAGE_SENT;
    event.message_sent = &sent;
    if (send_event(gateway, &event, "message sent (alice, m1)") != 0) {
        return -1;
    }

    Receipts__V1__Delivered delivered = RECEIPTS__V1__DELIVERED__INIT;
    delivered.conversation_id = gateway->conversation;
    delivered.user_id = user_bob;
    delivered.message_id = message_m1;
    event = (Receipts__V1__Event)RECEIPTS__V1__EVENT__INIT;
    event.kind_case = RECEIPTS__V1__EVENT__KIND_DELIVERED;
    event.delivered = &delivered;
    if (send_event(gateway, &event, "delivered (bob, m1)") != 0) {
        return -1;
    }

    Receipts__V1__Read read = RECEIPTS__V1__READ__INIT;
    read.conversation_id = gateway->conversation;
    read.user_id = user_bob;
    read.message_id = message_m1;
    event = (Receipts__V1__Event)RECEIPTS__V1__EVENT__INIT;
    event.kind_case = RECEIPTS__V1__EVENT__KIND_READ;
    event.read = &read;
    return send_event(gateway, &event, "read (bob, m1)");
}

/* Prints status updates until one says m1 is READ. Returns 0, or -1 on failure or timeout. */
static int wait_for_read(struct gateway *gateway) {
    while (!gateway->saw_read) {
        int64_t remaining = gateway->deadline_ms - monotonic_ms();
        if (remaining <= 0) {
            fprintf(stderr, "%s: no READ update for m1 within the timeout\n", program);
            return -1;
        }
        zmq_pollitem_t item = { .socket = gateway->updates, .events = ZMQ_POLLIN };
        if (zmq_poll(&item, 1, (long)remaining) < 0) {
            if (zmq_errno() == EINTR) {
                continue;
            }
            return zmq_failure("zmq_poll");
        }
        if ((item.revents & ZMQ_POLLIN) != 0 && receive_update(gateway) != 0) {
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    struct options options = {
        .ingest = "ipc://receiptd-data/ingest.sock",
        .publish = "ipc://receiptd-data/updates.sock",
        .conversation = NULL, /* c-demo-<pid> */
        .source = NULL,       /* c-gateway-<pid> */
        .timeout_ms = 5000,
        .curve_server_key_file = NULL,
        .curve_client_key_file = NULL,
    };
    int parsed = parse_options(argc, argv, &options);
    if (parsed != 0) {
        return parsed < 0 ? 0 : parsed;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    struct gateway gateway = {
        .source = copy_or_default(options.source, "c-gateway-"),
        .conversation = copy_or_default(options.conversation, "c-demo-"),
        .next_sequence = 1,
    };
    int status = 1;
    if (gateway.source == NULL || gateway.conversation == NULL) {
        fprintf(stderr, "%s: out of memory\n", program);
        goto done;
    }
    gateway.deadline_ms = monotonic_ms() + options.timeout_ms;
    if (gateway_open(&gateway, &options) != 0) {
        goto done;
    }
    sleep_ms(200);
    if (send_events(&gateway) != 0 || wait_for_read(&gateway) != 0) {
        goto done;
    }
    printf("saw READ for m1: receiptd and this C gateway agree\n");
    status = 0;
done:
    gateway_close(&gateway);
    return status;
}
