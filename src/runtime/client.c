/* Clients: the backend choice, and the host state that runs share: the infeed and
 * outfeed queues and the channels (handlers and mailboxes). The interpreter reaches that
 * state through the exec_host callbacks defined here. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/compiler.h"
#include "cpu/cpu.h"
#include "interp/interp.h"
#include "runtime/replicas.h"
#include "runtime/runtime_internal.h"

static cxla_status oom(void) {
    return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory");
}

/* ---- queues ------------------------------------------------------------------------- */

/* Appends |lit| (taken). */
static cxla_status queue_push(runtime_queue *q, cxla_literal *lit) {
    if (q->count == q->capacity) {
        size_t cap = q->capacity ? 2 * q->capacity : 8;
        cxla_literal **items = malloc(cap * sizeof(*items));
        if (!items) {
            cxla_literal_free(lit);
            return oom();
        }
        for (size_t i = 0; i < q->count; i++) items[i] = q->items[(q->head + i) % q->capacity];
        free(q->items);
        q->items = items;
        q->head = 0;
        q->capacity = cap;
    }
    q->items[(q->head + q->count) % q->capacity] = lit;
    q->count++;
    return NULL;
}

/* The oldest item, or NULL when empty. */
static cxla_literal *queue_pop(runtime_queue *q) {
    if (!q->count) return NULL;
    cxla_literal *lit = q->items[q->head];
    q->head = (q->head + 1) % q->capacity;
    q->count--;
    return lit;
}

static void queue_free(runtime_queue *q) {
    cxla_literal *lit;
    while ((lit = queue_pop(q))) cxla_literal_free(lit);
    free(q->items);
    memset(q, 0, sizeof(*q));
}

/* ---- channels (call with the lock held) ------------------------------------------------ */

static runtime_channel *find_channel(cxla_client *c, int64_t id) {
    for (size_t i = 0; i < c->channel_count; i++)
        if (c->channels[i].id == id) return &c->channels[i];
    return NULL;
}

static runtime_channel *get_channel(cxla_client *c, int64_t id) {
    runtime_channel *ch = find_channel(c, id);
    if (ch) return ch;
    if (c->channel_count == c->channel_capacity) {
        size_t cap = c->channel_capacity ? 2 * c->channel_capacity : 8;
        runtime_channel *grown = realloc(c->channels, cap * sizeof(*grown));
        if (!grown) return NULL;
        c->channels = grown;
        c->channel_capacity = cap;
    }
    ch = &c->channels[c->channel_count++];
    memset(ch, 0, sizeof(*ch));
    ch->id = id;
    return ch;
}

/* The handlers for |id|: its own, else the catch-all ones. */
static void handlers_for(cxla_client *c, int64_t id, cxla_send_handler *send,
                         cxla_recv_handler *recv, void **user) {
    runtime_channel *ch = find_channel(c, id);
    runtime_channel *any = find_channel(c, CXLA_CHANNEL_ANY);
    *send = NULL;
    *recv = NULL;
    *user = NULL;
    if (ch && (ch->send || ch->recv)) {
        *send = ch->send;
        *recv = ch->recv;
        *user = ch->user;
    } else if (any) {
        *send = any->send;
        *recv = any->recv;
        *user = any->user;
    }
}

/* ---- the interpreter's host callbacks ---------------------------------------------------- */

static cxla_status host_infeed(void *user, const cxla_shape *shape, const char *config,
                               cxla_literal **out) {
    cxla_client *c = user;
    pthread_mutex_lock(&c->lock);
    *out = queue_pop(&c->infeed);
    pthread_mutex_unlock(&c->lock);
    if (!*out)
        return cxla_error(CXLA_STATUS_FAILED_PRECONDITION,
                          "the infeed queue is empty (push data with cxla_client_infeed_push, "
                          "or `cxla run --infeed FILE`)");
    return NULL;
}

static cxla_status host_outfeed(void *user, const cxla_literal *data, const cxla_shape *shape,
                                const char *config) {
    cxla_client *c = user;
    cxla_literal *copy = NULL;
    CXLA_RETURN_IF_ERROR(cxla_literal_clone(data, &copy));
    pthread_mutex_lock(&c->lock);
    cxla_status s = queue_push(&c->outfeed, copy);
    pthread_mutex_unlock(&c->lock);
    return s;
}

static cxla_status host_send(void *user, int64_t channel_id, bool is_host_transfer,
                             const cxla_literal *data) {
    cxla_client *c = user;
    cxla_send_handler send;
    cxla_recv_handler recv;
    void *handler_user;
    pthread_mutex_lock(&c->lock);
    handlers_for(c, channel_id, &send, &recv, &handler_user);
    pthread_mutex_unlock(&c->lock);
    if (send) {
        cxla_status s = send(handler_user, channel_id, is_host_transfer, data);
        return s ? cxla_status_annotate(s, "the send handler of channel %" PRId64, channel_id)
                 : NULL;
    }
    cxla_literal *copy = NULL;
    CXLA_RETURN_IF_ERROR(cxla_literal_clone(data, &copy));
    pthread_mutex_lock(&c->lock);
    runtime_channel *ch = get_channel(c, channel_id);
    cxla_status s = ch ? queue_push(&ch->mailbox, copy) : oom();
    if (!ch) cxla_literal_free(copy);
    pthread_mutex_unlock(&c->lock);
    return s;
}

static cxla_status host_recv(void *user, int64_t channel_id, bool is_host_transfer,
                             const cxla_shape *shape, cxla_literal **out) {
    cxla_client *c = user;
    cxla_send_handler send;
    cxla_recv_handler recv;
    void *handler_user;
    *out = NULL;
    pthread_mutex_lock(&c->lock);
    handlers_for(c, channel_id, &send, &recv, &handler_user);
    if (!recv) {
        runtime_channel *ch = find_channel(c, channel_id);
        *out = ch ? queue_pop(&ch->mailbox) : NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (recv) {
        cxla_status s = recv(handler_user, channel_id, is_host_transfer, shape, out);
        if (s) {
            cxla_literal_free(*out);
            *out = NULL;
            return cxla_status_annotate(s, "the recv handler of channel %" PRId64, channel_id);
        }
        if (!*out)
            return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                              "the recv handler of channel %" PRId64 " returned no data",
                              channel_id);
        return NULL;
    }
    if (!*out)
        return cxla_error(CXLA_STATUS_FAILED_PRECONDITION,
                          "nothing was sent on channel %" PRId64
                          " (a send on that channel, in this run or an earlier one of the same "
                          "client, or cxla_client_channel_push, provides the data; or install "
                          "a recv handler)",
                          channel_id);
    return NULL;
}

/* ---- the default backend ------------------------------------------------------------------ */

/* The default for a client whose options name no backend: $CXLA_BACKEND when it is set,
 * else the cpu backend when the C compiler runs (its probe is asked once per process and
 * compiler), else the interpreter. |*out_fell_back| says that the last case happened: no
 * compiler. The decision is made again for each client, so a program that sets CXLA_BACKEND
 * or CXLA_CC between clients is followed; only the probe is cached. */
static cxla_status choose_default(const exec_backend **out, char *why, size_t size,
                                  bool *out_fell_back) {
    *out_fell_back = false;
    const char *env = getenv("CXLA_BACKEND");
    if (env && *env) {
        const exec_backend *b = runtime_backend_find(env);
        if (!b)
            return cxla_error(CXLA_STATUS_NOT_FOUND,
                              "CXLA_BACKEND names an unknown backend '%s' (available: %s)", env,
                              runtime_backend_names());
        snprintf(why, size, "CXLA_BACKEND=%s", env);
        *out = b;
        return NULL;
    }
    char version[160];
    cxla_status s = cpu_compiler_probe(version, sizeof version);
    if (!s) {
        snprintf(why, size, "the C compiler runs: %s", version[0] ? version : "(no version)");
        *out = &cpu_backend;
        return NULL;
    }
    snprintf(why, size, "no C compiler: %s", cxla_status_message(s));
    cxla_status_free(s);
    *out = &interp_backend;
    *out_fell_back = true;
    return NULL;
}

cxla_status cxla_default_backend(const char **out_name, char *out_reason, size_t size) {
    char why[512];
    const exec_backend *b = NULL;
    bool fell_back;
    CXLA_RETURN_IF_ERROR(choose_default(&b, why, sizeof why, &fell_back));
    if (out_name) *out_name = b->name;
    if (out_reason && size) snprintf(out_reason, size, "%s", why);
    return NULL;
}

/* The fallback notice goes out once per process, whatever the number of clients. */
static atomic_bool fallback_noticed;

static void notice_fallback(const cxla_client_options *options) {
    const char *quiet = getenv("CXLA_QUIET_FALLBACK");
    if (options->quiet_fallback || (quiet && *quiet && strcmp(quiet, "0") != 0)) return;
    if (atomic_exchange(&fallback_noticed, true)) return;
    fprintf(stderr, "cxla: no C compiler found (set CXLA_CC or install build-essential): using "
                    "the interpreter\n");
}

/* ---- the client ------------------------------------------------------------------------ */

void cxla_client_options_init(cxla_client_options *options) {
    if (options) memset(options, 0, sizeof(*options));
}

cxla_status cxla_client_create(const cxla_client_options *options, cxla_client **out_client) {
    cxla_client_options defaults;
    cxla_client_options_init(&defaults);
    if (!options) options = &defaults;
    if (options->thread_count < 0)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "thread_count must be >= 0, got %d",
                          options->thread_count);
    const exec_backend *backend = NULL;
    if (options->backend) {
        backend = runtime_backend_find(options->backend);
        if (!backend)
            return cxla_error(CXLA_STATUS_NOT_FOUND, "unknown backend '%s' (available: %s)",
                              options->backend, runtime_backend_names());
    } else {
        char why[512];
        bool fell_back;
        CXLA_RETURN_IF_ERROR(choose_default(&backend, why, sizeof why, &fell_back));
        if (fell_back) notice_fallback(options);
    }
    /* StableHLO's run_parallel target runs device modules through the runtime. */
    cxla_replicas_install_runner();
    cxla_client *c = calloc(1, sizeof(*c));
    if (!c) return oom();
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return cxla_error(CXLA_STATUS_UNAVAILABLE, "cannot create a mutex");
    }
    c->backend = backend;
    c->thread_count = options->thread_count;
    c->seed = options->seed;
    c->host = (exec_host){
        .user = c,
        .infeed = host_infeed,
        .outfeed = host_outfeed,
        .send = host_send,
        .recv = host_recv,
    };
    *out_client = c;
    return NULL;
}

static void client_free(cxla_client *c) {
    queue_free(&c->infeed);
    queue_free(&c->outfeed);
    for (size_t i = 0; i < c->channel_count; i++) queue_free(&c->channels[i].mailbox);
    free(c->channels);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

void cxla_client_destroy(cxla_client *client) {
    if (!client) return;
    pthread_mutex_lock(&client->lock);
    client->destroyed = true;
    bool last = client->executables == 0;
    pthread_mutex_unlock(&client->lock);
    if (last) client_free(client);
}

void runtime_client_retain(cxla_client *client) {
    pthread_mutex_lock(&client->lock);
    client->executables++;
    pthread_mutex_unlock(&client->lock);
}

void runtime_client_release(cxla_client *client) {
    pthread_mutex_lock(&client->lock);
    bool last = --client->executables == 0 && client->destroyed;
    pthread_mutex_unlock(&client->lock);
    if (last) client_free(client);
}

const char *cxla_client_backend(const cxla_client *client) {
    return client ? client->backend->name : "";
}

/* ---- the public queue and channel calls -------------------------------------------------- */

cxla_status cxla_client_infeed_push(cxla_client *client, cxla_literal *literal) {
    if (!client || !literal) {
        cxla_literal_free(literal);
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "infeed_push needs a client and a literal");
    }
    pthread_mutex_lock(&client->lock);
    cxla_status s = queue_push(&client->infeed, literal);
    pthread_mutex_unlock(&client->lock);
    return s;
}

int64_t cxla_client_infeed_count(cxla_client *client) {
    pthread_mutex_lock(&client->lock);
    int64_t n = (int64_t)client->infeed.count;
    pthread_mutex_unlock(&client->lock);
    return n;
}

void cxla_client_infeed_clear(cxla_client *client) {
    pthread_mutex_lock(&client->lock);
    queue_free(&client->infeed);
    pthread_mutex_unlock(&client->lock);
}

cxla_status cxla_client_outfeed_pop(cxla_client *client, cxla_literal **out_literal) {
    pthread_mutex_lock(&client->lock);
    cxla_literal *lit = queue_pop(&client->outfeed);
    pthread_mutex_unlock(&client->lock);
    if (!lit) return cxla_error(CXLA_STATUS_OUT_OF_RANGE, "the outfeed queue is empty");
    *out_literal = lit;
    return NULL;
}

int64_t cxla_client_outfeed_count(cxla_client *client) {
    pthread_mutex_lock(&client->lock);
    int64_t n = (int64_t)client->outfeed.count;
    pthread_mutex_unlock(&client->lock);
    return n;
}

cxla_status cxla_client_set_channel_handlers(cxla_client *client, int64_t channel_id,
                                             cxla_send_handler send, cxla_recv_handler recv,
                                             void *user) {
    if (channel_id < CXLA_CHANNEL_ANY)
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "channel id %" PRId64 " is invalid (>= 0, or CXLA_CHANNEL_ANY)",
                          channel_id);
    pthread_mutex_lock(&client->lock);
    runtime_channel *ch = get_channel(client, channel_id);
    if (ch) {
        ch->send = send;
        ch->recv = recv;
        ch->user = user;
    }
    pthread_mutex_unlock(&client->lock);
    return ch ? NULL : oom();
}

cxla_status cxla_client_channel_push(cxla_client *client, int64_t channel_id,
                                     cxla_literal *literal) {
    if (!literal || channel_id < 0) {
        cxla_literal_free(literal);
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "channel_push needs a literal and a channel id >= 0 (got %" PRId64 ")",
                          channel_id);
    }
    pthread_mutex_lock(&client->lock);
    runtime_channel *ch = get_channel(client, channel_id);
    cxla_status s = ch ? queue_push(&ch->mailbox, literal) : oom();
    pthread_mutex_unlock(&client->lock);
    if (!ch) cxla_literal_free(literal);
    return s;
}

cxla_status cxla_client_channel_pop(cxla_client *client, int64_t channel_id,
                                    cxla_literal **out_literal) {
    pthread_mutex_lock(&client->lock);
    runtime_channel *ch = find_channel(client, channel_id);
    cxla_literal *lit = ch ? queue_pop(&ch->mailbox) : NULL;
    pthread_mutex_unlock(&client->lock);
    if (!lit)
        return cxla_error(CXLA_STATUS_OUT_OF_RANGE, "the mailbox of channel %" PRId64 " is empty",
                          channel_id);
    *out_literal = lit;
    return NULL;
}

int64_t cxla_client_channel_count(cxla_client *client, int64_t channel_id) {
    pthread_mutex_lock(&client->lock);
    runtime_channel *ch = find_channel(client, channel_id);
    int64_t n = ch ? (int64_t)ch->mailbox.count : 0;
    pthread_mutex_unlock(&client->lock);
    return n;
}
