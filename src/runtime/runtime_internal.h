/* The runtime from the inside: the client's host state (queues, channels) and the
 * executable. client.c owns the client and the host callbacks it gives the interpreter;
 * executable.c compiles and runs. */
#ifndef CXLA_RUNTIME_RUNTIME_INTERNAL_H_
#define CXLA_RUNTIME_RUNTIME_INTERNAL_H_

#include <pthread.h>

#include "cxla/runtime.h"
#include "exec/devices.h"
#include "hlo/hlo.h"
#include "interp/interp.h"

/* A FIFO of owned literals. */
typedef struct runtime_queue {
    cxla_literal **items;
    size_t head, count, capacity;
} runtime_queue;

typedef struct runtime_channel {
    int64_t id; /* CXLA_CHANNEL_ANY for the catch-all handlers */
    runtime_queue mailbox;
    cxla_send_handler send;
    cxla_recv_handler recv;
    void *user;
} runtime_channel;

struct cxla_client {
    const exec_backend *backend;
    int thread_count;
    uint64_t seed;
    pthread_mutex_t lock; /* guards everything below */
    runtime_queue infeed, outfeed;
    runtime_channel *channels;
    size_t channel_count, channel_capacity;
    int64_t executables; /* live executables */
    bool destroyed;      /* cxla_client_destroy was called */
    exec_host host;      /* callbacks into the above, user = the client */
};

struct cxla_executable {
    cxla_client *client;
    cxla_module *module; /* owned */
    const exec_backend *backend;
    void *compiled; /* the backend's form of |module| */
    /* The devices its collectives and shardings name, checked before each run. */
    exec_device_needs needs;
};

/* The backends built in (backends.c). Their order is the order of messages only: the
 * default is chosen by client.c (cxla_default_backend). */
extern const exec_backend *const runtime_backends[];
extern const int runtime_backend_count;
/* The backend called |name| (canonical or alias), or NULL. */
const exec_backend *runtime_backend_find(const char *name);
/* "interpreter, cpu": the canonical names, for messages. */
const char *runtime_backend_names(void);

/* Executables keep their client alive (client.c). */
void runtime_client_retain(cxla_client *client);
void runtime_client_release(cxla_client *client);

#endif /* CXLA_RUNTIME_RUNTIME_INTERNAL_H_ */
