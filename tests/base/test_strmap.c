/* cxla_strmap (src/base/strmap.c) holds copies of its keys: a caller may put a key from a
 * buffer it then reuses or frees (a name built in a scratch buffer, a stack array), and
 * the map still finds the old key, not the buffer's new contents, also after it grows
 * and rehashes every key. Under AddressSanitizer a map that kept the caller's pointer
 * would read freed memory here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "harness.h"

static void test_keys_outlive_the_callers_buffer(void) {
    cxla_arena *arena = cxla_arena_create();
    CHECK(arena != NULL);
    if (!arena) return;
    cxla_strmap map;
    cxla_strmap_init(&map, arena);
    char buf[32];
    /* 100 keys through one buffer: the map grows (and rehashes) several times. */
    for (int i = 0; i < 100; i++) {
        snprintf(buf, sizeof buf, "name.%d", i);
        CHECK(cxla_strmap_put(&map, buf, strlen(buf), (void *)(intptr_t)(i + 1)));
    }
    memset(buf, 'x', sizeof buf);
    for (int i = 0; i < 100; i++) {
        char want[32];
        snprintf(want, sizeof want, "name.%d", i);
        CHECK_EQ_I64((intptr_t)cxla_strmap_get(&map, want, strlen(want)), i + 1);
    }
    CHECK(cxla_strmap_get(&map, buf, 7) == NULL); /* "xxxxxxx": the buffer's new contents */
    /* A key from the heap, freed after the put. */
    char *heap = malloc(16);
    CHECK(heap != NULL);
    if (heap) {
        strcpy(heap, "freed.key");
        CHECK(cxla_strmap_put(&map, heap, strlen(heap), (void *)&map));
        free(heap);
    }
    for (int i = 100; i < 300; i++) { /* grows again: every key is hashed and compared */
        snprintf(buf, sizeof buf, "more.%d", i);
        CHECK(cxla_strmap_put(&map, buf, strlen(buf), (void *)(intptr_t)(i + 1)));
    }
    CHECK(cxla_strmap_get(&map, "freed.key", 9) == (void *)&map);
    CHECK_EQ_I64((intptr_t)cxla_strmap_get(&map, "more.299", 8), 300);
    /* Putting an existing key replaces the value and keeps one entry. */
    size_t count = map.count;
    snprintf(buf, sizeof buf, "name.%d", 7);
    CHECK(cxla_strmap_put(&map, buf, strlen(buf), (void *)(intptr_t)70));
    CHECK_EQ_I64((intptr_t)cxla_strmap_get(&map, "name.7", 6), 70);
    CHECK_EQ_I64((int64_t)map.count, (int64_t)count);
    cxla_arena_destroy(arena);
}

/* Keys are bytes: the parser keys parameter numbers by their int64_t bytes, NULs and all. */
static void test_binary_keys(void) {
    cxla_arena *arena = cxla_arena_create();
    if (!arena) return;
    cxla_strmap map;
    cxla_strmap_init(&map, arena);
    for (int64_t k = 0; k < 50; k++) {
        int64_t key = k * 256; /* a zero low byte */
        CHECK(cxla_strmap_put(&map, (const char *)&key, sizeof key, (void *)(intptr_t)(k + 1)));
        key = -1; /* the caller's variable changes */
    }
    for (int64_t k = 0; k < 50; k++) {
        int64_t key = k * 256;
        CHECK_EQ_I64((intptr_t)cxla_strmap_get(&map, (const char *)&key, sizeof key), k + 1);
    }
    CHECK(cxla_strmap_get(&map, "", 0) == NULL);
    CHECK(cxla_strmap_put(&map, "", 0, (void *)&map)); /* the empty key is a key */
    CHECK(cxla_strmap_get(&map, "", 0) == (void *)&map);
    cxla_arena_destroy(arena);
}

TEST_MAIN(TEST(test_keys_outlive_the_callers_buffer), TEST(test_binary_keys))
