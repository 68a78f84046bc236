/* The communicator of a run across processes under MPI: rank d of MPI_COMM_WORLD (in a
 * duplicate of it, so that cxla's messages never meet the program's) is device d.
 *
 * Every message is one MPI_Isend of bytes: a header (kind, run, collective instance) and,
 * for data, each array's element type, dims and row-major bytes in this machine's byte
 * order (the ranks must share one architecture). Receivers poll with MPI_Iprobe and keep
 * what came early in a stash, so that messages may arrive in any order and a receive can
 * give up at its time limit. At the end of a run every rank tells every other one how it
 * ended (a FIN message: success, or the failure and the device it comes from) and waits
 * for all of theirs; since MPI keeps the order of the messages between two ranks, a
 * device waiting for data from a rank whose FIN arrived knows that nothing will come,
 * and a failure reaches every rank instead of leaving it waiting. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "runtime/replicas.h"

#define OOM() cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED, "out of memory")

enum { TAG = 7117, MAGIC = 0x43584c41 /* "CXLA" */, KIND_DATA = 1, KIND_FIN = 2 };

struct cxla_mpi_session {
    MPI_Comm comm;
    int rank, size;
    bool initialized_here;
    int64_t runs;
    /* A run ended without the end-of-run message of every other rank (one that is stuck,
     * or gone): messages may still be in flight, and MPI_Finalize would wait for the
     * silent ranks without end. */
    bool abandoned;
};

bool cxla_mpi_available(void) {
    return true;
}

static cxla_status mpi_error(int rc, const char *what) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
    text[len] = '\0';
    return cxla_error(CXLA_STATUS_UNAVAILABLE, "MPI %s failed: %s", what, len ? text : "?");
}

cxla_status cxla_mpi_session_create(int *argc, char ***argv, cxla_mpi_session **out_session) {
    cxla_mpi_session *s = calloc(1, sizeof(*s));
    if (!s) return OOM();
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) {
        int rc = MPI_Init(argc, argv);
        if (rc != MPI_SUCCESS) {
            free(s);
            return mpi_error(rc, "MPI_Init");
        }
        s->initialized_here = true;
    }
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &s->comm);
    if (rc != MPI_SUCCESS) {
        if (s->initialized_here) MPI_Finalize();
        free(s);
        return mpi_error(rc, "MPI_Comm_dup");
    }
    MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(s->comm, &s->rank);
    MPI_Comm_size(s->comm, &s->size);
    *out_session = s;
    return NULL;
}

int64_t cxla_mpi_session_rank(const cxla_mpi_session *session) {
    return session->rank;
}

int64_t cxla_mpi_session_size(const cxla_mpi_session *session) {
    return session->size;
}

void cxla_mpi_session_destroy(cxla_mpi_session *session) {
    if (!session) return;
    if (session->abandoned) {
        /* MPI_Comm_free and MPI_Finalize synchronize with the ranks that did not answer,
         * which may never come: leave both out, so that this process ends (its failure
         * already said which rank did not answer; mpirun then ends the job, since a
         * rank exited with a failure). A program that initialized MPI itself decides. */
        free(session);
        return;
    }
    MPI_Comm_free(&session->comm);
    if (session->initialized_here) MPI_Finalize();
    free(session);
}

/* ---- bytes ------------------------------------------------------------------------ */

typedef struct writer {
    uint8_t *data;
    size_t len, cap;
    bool failed;
} writer;

static void put(writer *w, const void *p, size_t n) {
    if (w->failed) return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n) cap *= 2;
        uint8_t *d = realloc(w->data, cap);
        if (!d) {
            w->failed = true;
            return;
        }
        w->data = d;
        w->cap = cap;
    }
    if (n) memcpy(w->data + w->len, p, n);
    w->len += n;
}

static void put_i64(writer *w, int64_t v) {
    put(w, &v, sizeof(v));
}

typedef struct reader {
    const uint8_t *data;
    size_t len, pos;
    bool failed;
} reader;

static const void *get(reader *r, size_t n) {
    if (r->failed || r->len - r->pos < n) {
        r->failed = true;
        return NULL;
    }
    const void *p = r->data + r->pos;
    r->pos += n;
    return p;
}

static int64_t get_i64(reader *r) {
    int64_t v = 0;
    const void *p = get(r, sizeof(v));
    if (p) memcpy(&v, p, sizeof(v));
    return v;
}

/* ---- the communicator of one run -------------------------------------------------- */

typedef struct stashed {
    struct stashed *next;
    int64_t source, op_id, sequence, parts;
    cxla_literal **values;
} stashed;

typedef struct pending_send {
    MPI_Request request;
    uint8_t *buffer;
} pending_send;

typedef struct mpi_comm {
    exec_comm base; /* first: the interpreter's handle */
    cxla_mpi_session *session;
    int64_t run, device, count, partitions;
    double timeout;
    stashed *stash;
    bool *finished;      /* a FIN came from the device */
    int64_t *fin_code;   /* its status code (0 for success) */
    int64_t *fin_root;   /* the device its failure comes from (-1 for success) */
    char **fin_message;  /* that failure's message */
    int64_t fin_count;   /* FINs received */
    int64_t poisoned_by; /* the root of the first failure heard of, or -1 */
    char *poison;        /* its message */
    int64_t poison_code;
    bool failed_by_peer;   /* the last exchange failed because another device failed */
    pending_send *pending; /* sends not known to be complete */
    int64_t pending_count, pending_cap;
    /* The run's cancellation: its poll hook reads messages while the device computes, so
     * that a failure elsewhere (a FIN) stops it even outside a collective. */
    exec_cancel cancel;
    char cancel_reason[512];
    cxla_status poll_failure; /* what the hook could not read, reported at the end */
} mpi_comm;

static void stashed_free(stashed *m) {
    for (int64_t i = 0; i < m->parts; i++) cxla_literal_free(m->values[i]);
    free(m->values);
    free(m);
}

static void name_of(const mpi_comm *c, int64_t device, char *buf, size_t size) {
    exec_device_name(c->partitions, device, buf, size);
}

/* Frees the buffers of the sends that completed. */
static void reap_sends(mpi_comm *c, bool wait) {
    int64_t kept = 0;
    for (int64_t i = 0; i < c->pending_count; i++) {
        int done = 0;
        if (wait) {
            MPI_Wait(&c->pending[i].request, MPI_STATUS_IGNORE); /* done, or MPI is broken */
            done = 1;
        } else if (MPI_Test(&c->pending[i].request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            done = 0;
        }
        if (done)
            free(c->pending[i].buffer);
        else
            c->pending[kept++] = c->pending[i];
    }
    c->pending_count = kept;
}

/* Sends |w|'s bytes (taken over) to |device|. */
static cxla_status send_bytes(mpi_comm *c, int64_t device, writer *w) {
    if (w->failed) {
        free(w->data);
        return OOM();
    }
    if (w->len > (size_t)INT_MAX) {
        free(w->data);
        return cxla_error(CXLA_STATUS_RESOURCE_EXHAUSTED,
                          "a message of %zu bytes is more than one MPI send carries", w->len);
    }
    if (c->pending_count == c->pending_cap) {
        int64_t cap = c->pending_cap ? c->pending_cap * 2 : 16;
        pending_send *p = realloc(c->pending, (size_t)cap * sizeof(*p));
        if (!p) {
            free(w->data);
            return OOM();
        }
        c->pending = p;
        c->pending_cap = cap;
    }
    pending_send *ps = &c->pending[c->pending_count];
    int rc =
        MPI_Isend(w->data, (int)w->len, MPI_BYTE, (int)device, TAG, c->session->comm, &ps->request);
    if (rc != MPI_SUCCESS) {
        free(w->data);
        return mpi_error(rc, "MPI_Isend");
    }
    ps->buffer = w->data;
    c->pending_count++;
    w->data = NULL;
    return NULL;
}

static void put_header(writer *w, const mpi_comm *c, int64_t kind) {
    put_i64(w, MAGIC);
    put_i64(w, kind);
    put_i64(w, c->run);
}

/* Decodes one array; an error for a malformed message. */
static cxla_status get_array(reader *r, cxla_literal **out) {
    int64_t type = get_i64(r), rank = get_i64(r);
    if (r->failed || type < 0 || type >= CXLA_TYPE_COUNT || !cxla_type_is_array((cxla_type)type) ||
        rank < 0 || rank > CXLA_MAX_RANK)
        return cxla_error(CXLA_STATUS_DATA_LOSS, "a malformed array header");
    int64_t dims[CXLA_MAX_RANK];
    for (int64_t j = 0; j < rank; j++) dims[j] = get_i64(r);
    int64_t bytes = get_i64(r);
    if (r->failed) return cxla_error(CXLA_STATUS_DATA_LOSS, "a truncated array header");
    cxla_shape s = {.type = (cxla_type)type, .rank = rank, .dims = dims};
    CXLA_RETURN_IF_ERROR(interp_new_array(&s, out));
    if ((size_t)bytes != cxla_literal_byte_size(*out)) {
        cxla_literal_free(*out);
        *out = NULL;
        return cxla_error(CXLA_STATUS_DATA_LOSS, "an array of %" PRId64 " bytes for its shape",
                          bytes);
    }
    const void *p = get(r, (size_t)bytes);
    if (!p) {
        cxla_literal_free(*out);
        *out = NULL;
        return cxla_error(CXLA_STATUS_DATA_LOSS, "a truncated array");
    }
    if (bytes) memcpy(cxla_literal_data(*out), p, (size_t)bytes);
    return NULL;
}

static cxla_status take_message(mpi_comm *c, int source, const uint8_t *data, size_t len) {
    reader r = {.data = data, .len = len};
    int64_t magic = get_i64(&r), kind = get_i64(&r), run = get_i64(&r);
    char who[64];
    name_of(c, source, who, sizeof(who));
    if (r.failed || magic != MAGIC)
        return cxla_error(CXLA_STATUS_DATA_LOSS, "a message from %s that is not cxla's", who);
    if (run != c->run) return NULL; /* cannot happen: runs end with every message read */
    if (kind == KIND_FIN) {
        int64_t code = get_i64(&r), root = get_i64(&r), n = get_i64(&r);
        const char *text = n >= 0 ? get(&r, (size_t)n) : NULL;
        if (r.failed || c->finished[source])
            return cxla_error(CXLA_STATUS_DATA_LOSS, "a malformed end message from %s", who);
        c->finished[source] = true;
        c->fin_count++;
        c->fin_code[source] = code;
        c->fin_root[source] = code ? (root >= 0 && root < c->count ? root : source) : -1;
        if (code) {
            c->fin_message[source] = malloc((size_t)n + 1);
            if (!c->fin_message[source]) return OOM();
            memcpy(c->fin_message[source], text, (size_t)n);
            c->fin_message[source][n] = '\0';
            if (c->poisoned_by < 0) {
                c->poisoned_by = c->fin_root[source];
                c->poison_code = code;
                c->poison = malloc((size_t)n + 1);
                if (!c->poison) return OOM();
                memcpy(c->poison, text, (size_t)n);
                c->poison[n] = '\0';
            }
        }
        return NULL;
    }
    if (kind != KIND_DATA)
        return cxla_error(CXLA_STATUS_DATA_LOSS, "a message of unknown kind from %s", who);
    stashed *m = calloc(1, sizeof(*m));
    if (!m) return OOM();
    m->source = source;
    m->op_id = get_i64(&r);
    m->sequence = get_i64(&r);
    int64_t parts = get_i64(&r);
    if (r.failed || parts < 0 || parts > (int64_t)len) {
        free(m);
        return cxla_error(CXLA_STATUS_DATA_LOSS, "a malformed message from %s", who);
    }
    m->values = calloc((size_t)(parts ? parts : 1), sizeof(*m->values));
    if (!m->values) {
        free(m);
        return OOM();
    }
    cxla_status s = NULL;
    for (int64_t i = 0; i < parts && !s; i++) {
        s = get_array(&r, &m->values[i]);
        m->parts = i + 1;
    }
    if (s) {
        stashed_free(m);
        return cxla_status_annotate(s, "in a message from %s", who);
    }
    stashed **tail = &c->stash;
    while (*tail) tail = &(*tail)->next;
    *tail = m;
    return NULL;
}

/* Reads every message that has arrived. */
static cxla_status poll_messages(mpi_comm *c) {
    for (;;) {
        int flag = 0;
        MPI_Status st;
        int rc = MPI_Iprobe(MPI_ANY_SOURCE, TAG, c->session->comm, &flag, &st);
        if (rc != MPI_SUCCESS) return mpi_error(rc, "MPI_Iprobe");
        if (!flag) return NULL;
        int n = 0;
        MPI_Get_count(&st, MPI_BYTE, &n);
        uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
        if (!buf) return OOM();
        rc = MPI_Recv(buf, n, MPI_BYTE, st.MPI_SOURCE, TAG, c->session->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            free(buf);
            return mpi_error(rc, "MPI_Recv");
        }
        cxla_status s = take_message(c, st.MPI_SOURCE, buf, (size_t)n);
        free(buf);
        if (s) return s;
    }
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Sleeps a little longer each time, up to a millisecond. */
static void back_off(long *ns) {
    struct timespec t = {0, *ns};
    nanosleep(&t, NULL);
    if (*ns < 1000000L) *ns *= 2;
}

static stashed *find_stashed(mpi_comm *c, const exec_exchange *x, int64_t source, stashed **prev) {
    stashed *p = NULL;
    for (stashed *m = c->stash; m; p = m, m = m->next)
        if (m->source == source && m->op_id == x->op_id && m->sequence == x->sequence) {
            if (prev) *prev = p;
            return m;
        }
    return NULL;
}

static cxla_status poisoned_error(mpi_comm *c) {
    char name[64];
    name_of(c, c->poisoned_by, name, sizeof(name));
    c->failed_by_peer = true;
    return cxla_error(CXLA_STATUS_UNAVAILABLE, "%s failed: %s", name, c->poison);
}

/* exec_cancel's poll hook: reads what arrived; a failure heard of cancels the run. */
static void poll_hook(exec_cancel *self, void *user) {
    mpi_comm *c = user;
    if (!c->poll_failure) c->poll_failure = poll_messages(c);
    if (c->poisoned_by < 0) return;
    char name[64];
    name_of(c, c->poisoned_by, name, sizeof(name));
    snprintf(c->cancel_reason, sizeof(c->cancel_reason), "%s failed: %s", name, c->poison);
    c->failed_by_peer = true;
    exec_cancel_request(self, CXLA_STATUS_CANCELLED, c->cancel_reason);
}

static cxla_status exchange(exec_comm *comm, const exec_exchange *x) {
    mpi_comm *c = (mpi_comm *)comm;
    c->failed_by_peer = false;
    cxla_status s = poll_messages(c);
    if (s) return s;
    if (c->poisoned_by >= 0) return poisoned_error(c);
    for (int64_t k = 0; k < x->send_count && !s; k++) {
        writer w = {0};
        put_header(&w, c, KIND_DATA);
        put_i64(&w, x->op_id);
        put_i64(&w, x->sequence);
        put_i64(&w, x->parts);
        for (int64_t i = 0; i < x->parts; i++) {
            const cxla_literal *lit = x->sends[k * x->parts + i];
            const cxla_shape *sh = cxla_literal_shape(lit);
            put_i64(&w, sh->type);
            put_i64(&w, sh->rank);
            for (int64_t j = 0; j < sh->rank; j++) put_i64(&w, sh->dims[j]);
            put_i64(&w, (int64_t)cxla_literal_byte_size(lit));
            put(&w, cxla_literal_data_const(lit), cxla_literal_byte_size(lit));
        }
        s = send_bytes(c, x->to[k], &w);
    }
    if (s) return s;
    bool *arrived = calloc((size_t)(x->recv_count ? x->recv_count : 1), sizeof(*arrived));
    if (!arrived) return OOM();
    double limit = c->timeout * (double)(x->wait_rounds > 1 ? x->wait_rounds : 1);
    double deadline = now_seconds() + limit;
    long pause = 10000; /* ns */
    for (;;) {
        s = poll_messages(c);
        if (s) break;
        int64_t missing = 0;
        for (int64_t j = 0; j < x->recv_count; j++) {
            arrived[j] = find_stashed(c, x, x->from[j], NULL) != NULL;
            missing += !arrived[j];
        }
        if (!missing) {
            for (int64_t j = 0; j < x->recv_count; j++) {
                stashed *prev = NULL, *m = find_stashed(c, x, x->from[j], &prev);
                if (prev)
                    prev->next = m->next;
                else
                    c->stash = m->next;
                for (int64_t i = 0; i < x->parts; i++) {
                    x->recvs[j * x->parts + i] = i < m->parts ? m->values[i] : NULL;
                    if (i < m->parts) m->values[i] = NULL;
                }
                stashed_free(m);
            }
            break;
        }
        if (c->poisoned_by >= 0) {
            s = poisoned_error(c);
            break;
        }
        if (exec_cancelled(&c->cancel)) {
            s = exec_cancel_error(&c->cancel, NULL);
            break;
        }
        for (int64_t j = 0; j < x->recv_count && !s; j++)
            if (!arrived[j] && c->finished[x->from[j]])
                s = cxla_comm_ended_error(c->partitions, x->from[j], x->sequence);
        if (s) break;
        if (now_seconds() > deadline) {
            s = cxla_comm_timeout_error(c->partitions, limit, x->sequence, c->device, x->from,
                                        arrived, x->recv_count);
            break;
        }
        reap_sends(c, false);
        back_off(&pause);
    }
    free(arrived);
    return s;
}

/* The failure of a run whose end some ranks did not tell within the time limit; |local|
 * is how this device's own run ended (NULL: it succeeded). */
static cxla_status silent_error(const mpi_comm *c, cxla_status local) {
    cxla_strbuf names;
    cxla_strbuf_init(&names);
    int64_t silent = 0;
    for (int64_t d = 0; d < c->count; d++) {
        if (d == c->device || c->finished[d]) continue;
        char name[64];
        name_of(c, d, name, sizeof(name));
        cxla_strbuf_printf(&names, "%s%s", silent++ ? ", " : "", name);
    }
    cxla_status s = cxla_error(
        local ? cxla_status_code_of(local) : CXLA_STATUS_DEADLINE_EXCEEDED,
        "%s did not tell the end of %s run within the collective time limit of %g s (stuck "
        "where it does not read messages, or still computing)%s%s",
        names.data ? names.data : "another device", silent == 1 ? "its" : "their", c->timeout,
        local ? "; this device failed: " : "", local ? cxla_status_message(local) : "");
    cxla_strbuf_free(&names);
    return s;
}

/* Tells every other rank how this one ended and waits until all have told theirs, for
 * at most the collective time limit; then every send of the run is complete and every
 * message read. Fails when MPI does, or (DEADLINE_EXCEEDED, naming the ranks) when a rank
 * did not tell its end in time: a rank stuck where it does not look at messages (a
 * long kernel, a foreign call), or busy for longer than the limit with no collective.
 * The session is then abandoned (cxla_mpi_session_destroy). */
static cxla_status finish(mpi_comm *c, cxla_status local) {
    int64_t code = local ? cxla_status_code_of(local) : 0;
    int64_t root = -1;
    const char *message = "";
    if (local) {
        if (c->failed_by_peer && c->poisoned_by >= 0) {
            root = c->poisoned_by;
            message = c->poison;
            code = c->poison_code;
        } else {
            root = c->device;
            message = cxla_status_message(local);
        }
    }
    c->finished[c->device] = true;
    c->fin_code[c->device] = code;
    c->fin_root[c->device] = root;
    if (code && !(c->fin_message[c->device] = strdup(message))) return OOM();
    cxla_status s = NULL;
    for (int64_t d = 0; d < c->count && !s; d++) {
        if (d == c->device) continue;
        writer w = {0};
        put_header(&w, c, KIND_FIN);
        put_i64(&w, code);
        put_i64(&w, root);
        put_i64(&w, (int64_t)strlen(message));
        put(&w, message, strlen(message));
        s = send_bytes(c, d, &w);
    }
    long pause = 10000;
    double deadline = now_seconds() + c->timeout;
    while (!s && c->fin_count < c->count - 1) {
        s = poll_messages(c);
        if (!s && c->fin_count < c->count - 1) {
            if (now_seconds() > deadline) {
                s = silent_error(c, local);
                break;
            }
            reap_sends(c, false);
            back_off(&pause);
        }
    }
    if (c->fin_count < c->count - 1) {
        /* Sends to a rank that does not read may never complete: let them go (their
         * buffers too: MPI may still read them; the process is about to end). */
        for (int64_t i = 0; i < c->pending_count; i++) MPI_Request_free(&c->pending[i].request);
        c->pending_count = 0;
        c->session->abandoned = true;
        return s;
    }
    reap_sends(c, true);
    return s;
}

/* A run of this device, which fails at once with |failure| (taken) when it is not NULL. */
static cxla_status mpi_run(cxla_mpi_session *session, const cxla_module *module,
                           const cxla_replicas_options *options, const cxla_literal *const *args,
                           int64_t arg_count, cxla_status failure, cxla_literal **out_result) {
    if (!session || (!module && !failure) || !options || !out_result) {
        cxla_status_free(failure);
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT, "cxla_mpi_run: missing argument");
    }
    int64_t partitions, n;
    if (module) {
        cxla_status bad = cxla_replicas_device_count(module, options, &partitions, &n);
        if (bad) {
            cxla_status_free(failure);
            return bad;
        }
    } else {
        /* A device without a module (it failed to compile) counts as the options say. */
        partitions = options->partition_count > 0 ? options->partition_count : 1;
        n = options->replica_count * partitions;
    }
    if (n != session->size) {
        cxla_status_free(failure);
        return cxla_error(CXLA_STATUS_INVALID_ARGUMENT,
                          "%" PRId64 " replicas x %" PRId64 " partitions need %" PRId64
                          " MPI processes, there are %d (mpirun -np %" PRId64 ")",
                          options->replica_count, partitions, n, session->size, n);
    }
    mpi_comm c = {
        .base = {.replica_count = options->replica_count,
                 .partition_count = partitions,
                 .exchange = exchange},
        .session = session,
        .run = ++session->runs,
        .device = session->rank,
        .count = n,
        .partitions = partitions,
        .timeout = options->timeout_seconds > 0 ? options->timeout_seconds
                                                : CXLA_COLLECTIVE_TIMEOUT_DEFAULT,
        .poisoned_by = -1,
    };
    exec_cancel_init(&c.cancel, options->cancel);
    c.cancel.poll = poll_hook;
    c.cancel.poll_user = &c;
    c.finished = calloc((size_t)n, sizeof(*c.finished));
    c.fin_code = calloc((size_t)n, sizeof(*c.fin_code));
    c.fin_root = calloc((size_t)n, sizeof(*c.fin_root));
    c.fin_message = calloc((size_t)n, sizeof(*c.fin_message));
    cxla_status s = failure;
    if (!s && (!c.finished || !c.fin_code || !c.fin_root || !c.fin_message)) s = OOM();
    exec_run_options io = {
        .seed = options->seed,
        .replica_id = c.device / partitions,
        .partition_id = c.device % partitions,
        .comm = &c.base,
        .check_finite = options->check_finite,
        .host = options->host,
        .cancel = &c.cancel,
    };
    cxla_literal *result = NULL;
    if (!s) s = cxla_replicas_execute(module, options, &io, args, arg_count, &result);
    if (!s && c.poll_failure) {
        s = c.poll_failure;
        c.poll_failure = NULL;
    }
    cxla_status_free(c.poll_failure);
    cxla_status fs = c.finished ? finish(&c, s) : NULL;
    /* The verdict, the same on every rank: the lowest device that failed of its own. */
    int64_t first = -1;
    for (int64_t d = 0; !fs && d < n; d++)
        if (c.fin_code[d] && c.fin_root[d] == d) {
            first = d;
            break;
        }
    cxla_status verdict = fs;
    if (!verdict && first >= 0) {
        char name[64];
        name_of(&c, first, name, sizeof(name));
        verdict = cxla_error((cxla_status_code)c.fin_code[first], "%s failed: %s", name,
                             c.fin_message[first] ? c.fin_message[first] : "");
    } else if (!verdict && s) { /* unreachable: a failure always has a root */
        verdict = s;
        s = NULL;
    }
    cxla_status_free(s);
    while (c.stash) {
        stashed *next = c.stash->next;
        stashed_free(c.stash);
        c.stash = next;
    }
    for (int64_t d = 0; c.fin_message && d < n; d++) free(c.fin_message[d]);
    free(c.fin_message);
    free(c.finished);
    free(c.fin_code);
    free(c.fin_root);
    free(c.poison);
    free(c.pending);
    if (verdict) {
        cxla_literal_free(result);
        return verdict;
    }
    *out_result = result;
    return NULL;
}

cxla_status cxla_mpi_run(cxla_mpi_session *session, const cxla_module *module,
                         const cxla_replicas_options *options, const cxla_literal *const *args,
                         int64_t arg_count, cxla_literal **out_result) {
    return mpi_run(session, module, options, args, arg_count, NULL, out_result);
}

cxla_status cxla_mpi_run_failed(cxla_mpi_session *session, const cxla_module *module,
                                const cxla_replicas_options *options, cxla_status failure) {
    cxla_literal *unused = NULL;
    if (!failure) failure = cxla_error(CXLA_STATUS_INTERNAL, "cxla_mpi_run_failed: no failure");
    cxla_status s = mpi_run(session, module, options, NULL, 0, failure, &unused);
    cxla_literal_free(unused);
    return s;
}
