/* The communicator of the devices of one process, each running in its own thread: every
 * device has an inbox of messages (copies of the arrays sent to it, tagged with the
 * collective instance and the sender); a receive waits on one condition variable until
 * its messages are all there, a device it waits for has ended, the communicator is
 * poisoned by a failure, or the time limit passes. One mutex guards everything: devices
 * are few and messages are whole arrays, so contention does not matter. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "runtime/replicas.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

typedef struct message {
    struct message *next;
    int64_t op_id, sequence, source, parts;
    cxla_literal **values; /* parts arrays, owned */
} message;

typedef enum device_state { DEVICE_RUNNING, DEVICE_DONE, DEVICE_FAILED } device_state;

typedef struct endpoint {
    exec_comm base; /* first: the interpreter's handle is the endpoint */
    cxla_comm_threads *owner;
    int64_t device;
    message *inbox; /* messages sent to this device, oldest first */
    device_state state;
    bool failed_by_peer; /* its last exchange failed because another device failed */
} endpoint;

struct cxla_comm_threads {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t replicas, partitions, count;
    double timeout;
    endpoint *eps;
    int64_t poisoned_by; /* the first device that failed of its own, or -1 */
    cxla_status poison;  /* a copy of its status */
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

/* The message of (op_id, sequence) from |source| in |ep|'s inbox; |prev| gets its
 * predecessor (NULL for the head). */
static message *find_message(endpoint *ep, const exec_exchange *x, int64_t source, message **prev) {
    message *p = NULL;
    for (message *m = ep->inbox; m; p = m, m = m->next)
        if (m->op_id == x->op_id && m->sequence == x->sequence && m->source == source) {
            if (prev) *prev = p;
            return m;
        }
    return NULL;
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
    /* Copy what goes out before taking the lock. */
    message **out = calloc((size_t)(x->send_count ? x->send_count : 1), sizeof(*out));
    cxla_status s = out ? NULL : OOM();
    for (int64_t k = 0; k < x->send_count && !s; k++) {
        message *m = calloc(1, sizeof(*m));
        out[k] = m;
        if (!m || !(m->values = calloc((size_t)(x->parts ? x->parts : 1), sizeof(*m->values)))) {
            s = OOM();
            break;
        }
        m->op_id = x->op_id;
        m->sequence = x->sequence;
        m->source = ep->device;
        m->parts = x->parts;
        for (int64_t i = 0; i < x->parts && !s; i++)
            s = cxla_literal_clone(x->sends[k * x->parts + i], &m->values[i]);
    }
    if (s) {
        for (int64_t k = 0; out && k < x->send_count; k++) message_free(out[k]);
        free(out);
        return s;
    }
    bool *arrived = calloc((size_t)(x->recv_count ? x->recv_count : 1), sizeof(*arrived));
    if (!arrived) {
        for (int64_t k = 0; k < x->send_count; k++) message_free(out[k]);
        free(out);
        return OOM();
    }
    struct timespec deadline = deadline_after(c->timeout);

    pthread_mutex_lock(&c->mu);
    for (int64_t k = 0; k < x->send_count; k++) {
        endpoint *to = &c->eps[x->to[k]];
        message **tail = &to->inbox;
        while (*tail) tail = &(*tail)->next;
        *tail = out[k];
        out[k] = NULL;
    }
    free(out);
    if (x->send_count) pthread_cond_broadcast(&c->cv);
    bool timed_out = false;
    for (;;) {
        int64_t missing = 0;
        for (int64_t j = 0; j < x->recv_count; j++) {
            arrived[j] = find_message(ep, x, x->from[j], NULL) != NULL;
            missing += !arrived[j];
        }
        if (!missing) {
            for (int64_t j = 0; j < x->recv_count; j++) {
                message *prev = NULL, *m = find_message(ep, x, x->from[j], &prev);
                if (prev)
                    prev->next = m->next;
                else
                    ep->inbox = m->next;
                for (int64_t i = 0; i < x->parts; i++) {
                    x->recvs[j * x->parts + i] = i < m->parts ? m->values[i] : NULL;
                    if (i < m->parts) m->values[i] = NULL;
                }
                message_free(m);
            }
            break;
        }
        char name[64];
        if (c->poisoned_by >= 0) {
            name_of(c, c->poisoned_by, name, sizeof(name));
            s = cxla_error(CXLA_STATUS_UNAVAILABLE, "%s failed: %s", name,
                           cxla_status_message(c->poison));
            ep->failed_by_peer = true;
            break;
        }
        for (int64_t j = 0; j < x->recv_count && !s; j++) {
            device_state st = c->eps[x->from[j]].state;
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
            s = cxla_comm_timeout_error(c->partitions, c->timeout, x->sequence, ep->device, x->from,
                                        arrived, x->recv_count);
            break;
        }
        int rc = pthread_cond_timedwait(&c->cv, &c->mu, &deadline);
        if (rc == ETIMEDOUT) timed_out = true; /* one last look, then fail */
    }
    pthread_mutex_unlock(&c->mu);
    free(arrived);
    return s;
}

cxla_status cxla_comm_threads_create(int64_t replicas, int64_t partitions, double timeout_seconds,
                                     cxla_comm_threads **out_comm) {
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
    pthread_cond_init(&c->cv, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&c->mu, NULL);
    c->replicas = replicas;
    c->partitions = partitions;
    c->count = count;
    c->timeout = timeout_seconds;
    c->poisoned_by = -1;
    for (int64_t d = 0; d < count; d++) {
        endpoint *ep = &c->eps[d];
        ep->base.replica_count = replicas;
        ep->base.partition_count = partitions;
        ep->base.exchange = exchange;
        ep->owner = c;
        ep->device = d;
        ep->state = DEVICE_RUNNING;
    }
    *out_comm = c;
    return NULL;
}

exec_comm *cxla_comm_threads_endpoint(cxla_comm_threads *comm, int64_t device) {
    if (!comm || device < 0 || device >= comm->count) return NULL;
    return &comm->eps[device].base;
}

void cxla_comm_threads_finish(cxla_comm_threads *comm, int64_t device, cxla_status status) {
    if (!comm || device < 0 || device >= comm->count) return;
    pthread_mutex_lock(&comm->mu);
    endpoint *ep = &comm->eps[device];
    ep->state = status ? DEVICE_FAILED : DEVICE_DONE;
    if (status && !ep->failed_by_peer && comm->poisoned_by < 0) {
        comm->poisoned_by = device;
        comm->poison = copy_status(status);
    }
    pthread_cond_broadcast(&comm->cv);
    pthread_mutex_unlock(&comm->mu);
}

int64_t cxla_comm_threads_first_failure(cxla_comm_threads *comm, cxla_status *out_status) {
    pthread_mutex_lock(&comm->mu);
    int64_t d = comm->poisoned_by;
    if (out_status) *out_status = d >= 0 ? copy_status(comm->poison) : NULL;
    pthread_mutex_unlock(&comm->mu);
    return d;
}

void cxla_comm_threads_destroy(cxla_comm_threads *comm) {
    if (!comm) return;
    for (int64_t d = 0; d < comm->count; d++) {
        message *m = comm->eps[d].inbox;
        while (m) {
            message *next = m->next;
            message_free(m);
            m = next;
        }
    }
    cxla_status_free(comm->poison);
    pthread_cond_destroy(&comm->cv);
    pthread_mutex_destroy(&comm->mu);
    free(comm->eps);
    free(comm);
}
