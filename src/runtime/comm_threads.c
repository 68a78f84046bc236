/* The communicator of the devices of one process, each running in its own thread.
 *
 * Built to cost what the messages cost, whatever the device count (4096 devices of an
 * all-reduce take a few seconds, not hours): every device has its own mutex, condition
 * variable and inbox, a hash table of the messages sent to it (copies of the arrays,
 * keyed by collective instance and sender). A sender locks only the receiver, and wakes
 * it only when the receiver waits for that very instance and this message completes it.
 * A receiver waits in slices of SLICE_SECONDS and looks between them at what the
 * messages cannot tell it: a device it waits for that ended or failed, a cancelled run,
 * the time limit. A device that fails of its own poisons the communicator and cancels
 * the run (cxla_comm_threads_cancel), so that the others stop too, in a collective or
 * not. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "runtime/replicas.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

/* How often a waiting receiver looks at the state of the run besides its messages. */
#define SLICE_SECONDS 0.05

typedef struct message {
    struct message *next; /* in its hash bucket */
    int64_t op_id, sequence, source, parts;
    cxla_literal **values; /* parts arrays, owned */
} message;

enum { DEVICE_RUNNING, DEVICE_DONE, DEVICE_FAILED };

typedef struct endpoint {
    exec_comm base; /* first: the interpreter's handle is the endpoint */
    cxla_comm_threads *owner;
    int64_t device;
    pthread_mutex_t mu; /* guards the fields below */
    pthread_cond_t cv;
    message **buckets; /* the inbox: a hash table, bucket_count a power of two */
    int64_t bucket_count, message_count;
    /* The instance this device waits for, and how many of its messages it still needs
     * (senders count down and wake it at zero). */
    bool waiting;
    int64_t wait_op, wait_sequence, wait_missing;
    atomic_int state;    /* DEVICE_* */
    bool failed_by_peer; /* its last exchange failed because another device failed */
} endpoint;

struct cxla_comm_threads {
    pthread_mutex_t mu; /* guards poisoned_by and poison */
    int64_t replicas, partitions, count;
    double timeout;
    endpoint *eps;
    atomic_llong poisoned_by; /* the first device that failed of its own, or -1 */
    cxla_status poison;       /* a copy of its status */
    exec_cancel cancel;       /* the run's: requested when poisoned */
    char cancel_reason[512];  /* "replica 2 failed: ...", written before the request */
};

static void message_free(message *m) {
    if (!m) return;
    for (int64_t i = 0; i < m->parts; i++) cxla_literal_free(m->values[i]);
    free(m->values);
    free(m);
}

static void name_of(const cxla_comm_threads *c, int64_t device, char *buf, size_t size) {
    exec_device_name(c->partitions, device, buf, size);
}

static cxla_status copy_status(cxla_status s) {
    return cxla_error(cxla_status_code_of(s), "%s", cxla_status_message(s));
}

static struct timespec deadline_after(double seconds) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    double whole = (double)(int64_t)seconds;
    t.tv_sec += (time_t)whole;
    t.tv_nsec += (long)((seconds - whole) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static bool before(const struct timespec *a, const struct timespec *b) {
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* ---- inboxes (the endpoint's mutex held) ------------------------------------------ */

static uint64_t bucket_of(const endpoint *ep, int64_t op_id, int64_t sequence, int64_t source) {
    uint64_t h = (uint64_t)op_id * 0x9e3779b97f4a7c15u;
    h ^= (uint64_t)sequence * 0xc2b2ae3d27d4eb4fu + (h >> 29);
    h ^= (uint64_t)source * 0x165667b19e3779f9u + (h >> 31);
    h ^= h >> 32;
    return h & (uint64_t)(ep->bucket_count - 1);
}

/* The message of (op_id, sequence) from |source|, unlinked from the inbox when |take|. */
static message *find_message(endpoint *ep, int64_t op_id, int64_t sequence, int64_t source,
                             bool take) {
    if (!ep->bucket_count) return NULL;
    message **link = &ep->buckets[bucket_of(ep, op_id, sequence, source)];
    for (message *m = *link; m; link = &m->next, m = m->next)
        if (m->op_id == op_id && m->sequence == sequence && m->source == source) {
            if (take) {
                *link = m->next;
                m->next = NULL;
                ep->message_count--;
            }
            return m;
        }
    return NULL;
}

/* Adds |m|; false when the table could not grow (out of memory). */
static bool add_message(endpoint *ep, message *m) {
    if (ep->message_count >= ep->bucket_count) {
        int64_t count = ep->bucket_count ? ep->bucket_count * 2 : 16;
        message **b = calloc((size_t)count, sizeof(*b));
        if (!b) return false;
        message **old = ep->buckets;
        int64_t old_count = ep->bucket_count;
        ep->buckets = b;
        ep->bucket_count = count;
        for (int64_t i = 0; i < old_count; i++)
            for (message *x = old[i], *next; x; x = next) {
                next = x->next;
                uint64_t k = bucket_of(ep, x->op_id, x->sequence, x->source);
                x->next = b[k];
                b[k] = x;
            }
        free(old);
    }
    uint64_t k = bucket_of(ep, m->op_id, m->sequence, m->source);
    m->next = ep->buckets[k];
    ep->buckets[k] = m;
    ep->message_count++;
    return true;
}

/* ---- messages shared with comm_mpi.c --------------------------------------------- */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Appends the devices of |list| (sorted) as "replica 0, replica 2", or "none". */
static void put_devices(cxla_strbuf *b, int64_t partitions, int64_t *list, int64_t n) {
    qsort(list, (size_t)n, sizeof(*list), cmp_i64);
    char name[64];
    for (int64_t i = 0; i < n; i++) {
        exec_device_name(partitions, list[i], name, sizeof(name));
        cxla_strbuf_printf(b, "%s%s", i ? ", " : "", name);
    }
    if (!n) cxla_strbuf_puts(b, "none");
}

cxla_status cxla_comm_timeout_error(int64_t partitions, double timeout, int64_t sequence,
                                    int64_t self, const int64_t *from, const bool *arrived,
                                    int64_t n) {
    int64_t *in = malloc((size_t)(n + 1) * sizeof(*in));
    int64_t *out = malloc((size_t)(n + 1) * sizeof(*out));
    if (!in || !out) {
        free(in);
        free(out);
        return OOM();
    }
    int64_t ni = 0, no = 0;
    in[ni++] = self;
    for (int64_t j = 0; j < n; j++) {
        if (arrived[j])
            in[ni++] = from[j];
        else
            out[no++] = from[j];
    }
    cxla_strbuf b;
    cxla_strbuf_init(&b);
    cxla_strbuf_printf(&b,
                       "timed out after %g s waiting for the other devices of execution %" PRId64
                       " of this collective; arrived: ",
                       timeout, sequence + 1);
    put_devices(&b, partitions, in, ni);
    cxla_strbuf_puts(&b, "; missing: ");
    put_devices(&b, partitions, out, no);
    cxla_status s = cxla_error(CXLA_STATUS_DEADLINE_EXCEEDED, "%s", b.data ? b.data : "");
    cxla_strbuf_free(&b);
    free(in);
    free(out);
    return s;
}

cxla_status cxla_comm_ended_error(int64_t partitions, int64_t device, int64_t sequence) {
    char name[64];
    exec_device_name(partitions, device, name, sizeof(name));
    return cxla_error(CXLA_STATUS_FAILED_PRECONDITION,
                      "%s ended its program without taking part in execution %" PRId64
                      " of this collective (the devices ran different collectives, e.g. a "
                      "while loop ran a different number of times on them)",
                      name, sequence + 1);
}

static cxla_status exchange(exec_comm *comm, const exec_exchange *x) {
    endpoint *ep = (endpoint *)comm;
    cxla_comm_threads *c = ep->owner;
    ep->failed_by_peer = false;
    for (int64_t k = 0; k < x->send_count; k++)
        if (x->to[k] < 0 || x->to[k] >= c->count || x->to[k] == ep->device)
            return cxla_error(CXLA_STATUS_INTERNAL, "a message to device %" PRId64 " of %" PRId64,
                              x->to[k], c->count);
    for (int64_t j = 0; j < x->recv_count; j++)
        if (x->from[j] < 0 || x->from[j] >= c->count || x->from[j] == ep->device)
            return cxla_error(CXLA_STATUS_INTERNAL, "a message from device %" PRId64 " of %" PRId64,
                              x->from[j], c->count);
    /* Send: a copy of each message into its receiver's inbox, under its lock only. */
    cxla_status s = NULL;
    for (int64_t k = 0; k < x->send_count && !s; k++) {
        message *m = calloc(1, sizeof(*m));
        if (!m || !(m->values = calloc((size_t)(x->parts ? x->parts : 1), sizeof(*m->values)))) {
            free(m);
            s = OOM();
            break;
        }
        m->op_id = x->op_id;
        m->sequence = x->sequence;
        m->source = ep->device;
        m->parts = x->parts;
        for (int64_t i = 0; i < x->parts && !s; i++)
            s = cxla_literal_clone(x->sends[k * x->parts + i], &m->values[i]);
        endpoint *to = &c->eps[x->to[k]];
        pthread_mutex_lock(&to->mu);
        if (!s && !add_message(to, m)) s = OOM();
        if (s) {
            message_free(m);
        } else if (to->waiting && to->wait_op == x->op_id && to->wait_sequence == x->sequence &&
                   --to->wait_missing == 0) {
            pthread_cond_signal(&to->cv);
        }
        pthread_mutex_unlock(&to->mu);
    }
    if (s) return s;
    bool *arrived = calloc((size_t)(x->recv_count ? x->recv_count : 1), sizeof(*arrived));
    if (!arrived) return OOM();
    double limit = c->timeout * (double)(x->wait_rounds > 1 ? x->wait_rounds : 1);
    struct timespec deadline = deadline_after(limit);

    pthread_mutex_lock(&ep->mu);
    ep->waiting = true;
    ep->wait_op = x->op_id;
    ep->wait_sequence = x->sequence;
    ep->wait_missing = 0;
    for (int64_t j = 0; j < x->recv_count; j++)
        ep->wait_missing += find_message(ep, x->op_id, x->sequence, x->from[j], false) == NULL;
    bool timed_out = false;
    for (;;) {
        if (ep->wait_missing <= 0) {
            /* Senders counted down; make sure (a sender outside the group could have). */
            int64_t missing = 0;
            for (int64_t j = 0; j < x->recv_count; j++)
                missing += find_message(ep, x->op_id, x->sequence, x->from[j], false) == NULL;
            ep->wait_missing = missing;
            if (!missing) {
                for (int64_t j = 0; j < x->recv_count; j++) {
                    message *m = find_message(ep, x->op_id, x->sequence, x->from[j], true);
                    for (int64_t i = 0; i < x->parts; i++) {
                        x->recvs[j * x->parts + i] = i < m->parts ? m->values[i] : NULL;
                        if (i < m->parts) m->values[i] = NULL;
                    }
                    message_free(m);
                }
                break;
            }
        }
        /* Between slices: what the messages do not say. */
        char name[64];
        if (atomic_load(&c->poisoned_by) >= 0) {
            pthread_mutex_lock(&c->mu);
            name_of(c, c->poisoned_by, name, sizeof(name));
            s = cxla_error(CXLA_STATUS_UNAVAILABLE, "%s failed: %s", name,
                           cxla_status_message(c->poison));
            pthread_mutex_unlock(&c->mu);
            ep->failed_by_peer = true;
            break;
        }
        if (exec_cancelled(&c->cancel)) {
            s = exec_cancel_error(&c->cancel, NULL);
            break;
        }
        for (int64_t j = 0; j < x->recv_count && !s; j++) {
            arrived[j] = find_message(ep, x->op_id, x->sequence, x->from[j], false) != NULL;
            int st = atomic_load(&c->eps[x->from[j]].state);
            if (arrived[j] || st == DEVICE_RUNNING) continue;
            if (st == DEVICE_FAILED) { /* poisons first; kept for safety */
                name_of(c, x->from[j], name, sizeof(name));
                s = cxla_error(CXLA_STATUS_UNAVAILABLE, "%s failed", name);
                ep->failed_by_peer = true;
                break;
            }
            s = cxla_comm_ended_error(c->partitions, x->from[j], x->sequence);
        }
        if (s) break;
        if (timed_out) {
            s = cxla_comm_timeout_error(c->partitions, limit, x->sequence, ep->device, x->from,
                                        arrived, x->recv_count);
            break;
        }
        struct timespec wake = deadline_after(SLICE_SECONDS);
        bool last = !before(&wake, &deadline);
        int rc = pthread_cond_timedwait(&ep->cv, &ep->mu, last ? &deadline : &wake);
        if (rc == ETIMEDOUT && last) timed_out = true; /* one last look, then fail */
    }
    ep->waiting = false;
    pthread_mutex_unlock(&ep->mu);
    free(arrived);
    return s;
}

cxla_status cxla_comm_threads_create(int64_t replicas, int64_t partitions, double timeout_seconds,
                                     const exec_cancel *parent, cxla_comm_threads **out_comm) {
    int64_t count;
    if (replicas < 1 || partitions < 1 || !cxla_mul_i64(replicas, partitions, &count))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "a run needs at least one replica and one partition, got %" PRId64
                          " x %" PRId64,
                          replicas, partitions);
    if (!(timeout_seconds > 0))
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "the collective time limit must be positive, got %g s", timeout_seconds);
    cxla_comm_threads *c = calloc(1, sizeof(*c));
    if (!c) return OOM();
    c->eps = calloc((size_t)count, sizeof(*c->eps));
    if (!c->eps) {
        free(c);
        return OOM();
    }
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&c->mu, NULL);
    c->replicas = replicas;
    c->partitions = partitions;
    c->count = count;
    c->timeout = timeout_seconds;
    atomic_init(&c->poisoned_by, -1);
    exec_cancel_init(&c->cancel, parent);
    for (int64_t d = 0; d < count; d++) {
        endpoint *ep = &c->eps[d];
        ep->base.replica_count = replicas;
        ep->base.partition_count = partitions;
        ep->base.exchange = exchange;
        ep->owner = c;
        ep->device = d;
        pthread_mutex_init(&ep->mu, NULL);
        pthread_cond_init(&ep->cv, &attr);
        atomic_init(&ep->state, DEVICE_RUNNING);
    }
    pthread_condattr_destroy(&attr);
    *out_comm = c;
    return NULL;
}

exec_comm *cxla_comm_threads_endpoint(cxla_comm_threads *comm, int64_t device) {
    if (!comm || device < 0 || device >= comm->count) return NULL;
    return &comm->eps[device].base;
}

exec_cancel *cxla_comm_threads_cancel(cxla_comm_threads *comm) {
    return &comm->cancel;
}

void cxla_comm_threads_finish(cxla_comm_threads *comm, int64_t device, cxla_status status) {
    if (!comm || device < 0 || device >= comm->count) return;
    endpoint *ep = &comm->eps[device];
    /* A device stopped by the run's cancellation, which another's failure requested, did
     * not fail of its own. */
    bool own = status && !ep->failed_by_peer &&
               !(cxla_status_code_of(status) == CXLA_STATUS_CANCELLED &&
                 atomic_load(&comm->poisoned_by) >= 0);
    bool poisoned = false;
    pthread_mutex_lock(&comm->mu);
    atomic_store(&ep->state, status ? DEVICE_FAILED : DEVICE_DONE);
    if (own && atomic_load(&comm->poisoned_by) < 0) {
        comm->poison = copy_status(status);
        char name[64];
        name_of(comm, device, name, sizeof(name));
        snprintf(comm->cancel_reason, sizeof(comm->cancel_reason), "%s failed: %s", name,
                 cxla_status_message(status));
        atomic_store(&comm->poisoned_by, device);
        poisoned = true;
    }
    pthread_mutex_unlock(&comm->mu);
    if (!poisoned) return; /* receivers see the ended device at their next slice */
    /* Stop the others: those in a collective at once, the rest at their next check. */
    exec_cancel_request(&comm->cancel, CXLA_STATUS_CANCELLED, comm->cancel_reason);
    for (int64_t d = 0; d < comm->count; d++) {
        endpoint *e = &comm->eps[d];
        pthread_mutex_lock(&e->mu);
        if (e->waiting) pthread_cond_signal(&e->cv);
        pthread_mutex_unlock(&e->mu);
    }
}

int64_t cxla_comm_threads_first_failure(cxla_comm_threads *comm, cxla_status *out_status) {
    pthread_mutex_lock(&comm->mu);
    int64_t d = atomic_load(&comm->poisoned_by);
    if (out_status) *out_status = d >= 0 ? copy_status(comm->poison) : NULL;
    pthread_mutex_unlock(&comm->mu);
    return d;
}

void cxla_comm_threads_destroy(cxla_comm_threads *comm) {
    if (!comm) return;
    for (int64_t d = 0; d < comm->count; d++) {
        endpoint *ep = &comm->eps[d];
        for (int64_t i = 0; i < ep->bucket_count; i++)
            for (message *m = ep->buckets[i], *next; m; m = next) {
                next = m->next;
                message_free(m);
            }
        free(ep->buckets);
        pthread_cond_destroy(&ep->cv);
        pthread_mutex_destroy(&ep->mu);
    }
    cxla_status_free(comm->poison);
    pthread_mutex_destroy(&comm->mu);
    free(comm->eps);
    free(comm);
}
