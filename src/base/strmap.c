/* A string-keyed open-addressing hash map in an arena, which holds its keys' copies. */
#include <string.h>

#include "base/base.h"

static uint64_t hash_bytes(const char *s, size_t len) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

void cxla_strmap_init(cxla_strmap *map, cxla_arena *arena) {
    memset(map, 0, sizeof(*map));
    map->arena = arena;
}

static bool grow(cxla_strmap *map) {
    size_t cap = map->capacity ? map->capacity * 2 : 16;
    const char **keys = cxla_arena_alloc_array(map->arena, cap, sizeof(*keys));
    size_t *lens = cxla_arena_alloc_array(map->arena, cap, sizeof(*lens));
    void **values = cxla_arena_alloc_array(map->arena, cap, sizeof(*values));
    if (!keys || !lens || !values) return false;
    for (size_t i = 0; i < map->capacity; i++) {
        if (!map->keys[i]) continue;
        size_t j = hash_bytes(map->keys[i], map->key_lens[i]) & (cap - 1);
        while (keys[j]) j = (j + 1) & (cap - 1);
        keys[j] = map->keys[i];
        lens[j] = map->key_lens[i];
        values[j] = map->values[i];
    }
    map->keys = keys;
    map->key_lens = lens;
    map->values = values;
    map->capacity = cap;
    return true;
}

bool cxla_strmap_put(cxla_strmap *map, const char *key, size_t len, void *value) {
    if ((map->count + 1) * 2 > map->capacity && !grow(map)) return false;
    size_t j = hash_bytes(key, len) & (map->capacity - 1);
    while (map->keys[j]) {
        if (map->key_lens[j] == len && memcmp(map->keys[j], key, len) == 0) {
            map->values[j] = value;
            return true;
        }
        j = (j + 1) & (map->capacity - 1);
    }
    /* The map keeps its own copy: a caller's key may be a buffer it reuses or frees. */
    char *copy = cxla_arena_alloc(map->arena, len + 1);
    if (!copy) return false;
    if (len) memcpy(copy, key, len);
    copy[len] = '\0';
    map->keys[j] = copy;
    map->key_lens[j] = len;
    map->values[j] = value;
    map->count++;
    return true;
}

void *cxla_strmap_get(const cxla_strmap *map, const char *key, size_t len) {
    if (!map->capacity) return NULL;
    size_t j = hash_bytes(key, len) & (map->capacity - 1);
    while (map->keys[j]) {
        if (map->key_lens[j] == len && memcmp(map->keys[j], key, len) == 0) return map->values[j];
        j = (j + 1) & (map->capacity - 1);
    }
    return NULL;
}
