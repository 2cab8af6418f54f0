#ifndef CNGHTTP2_SHIM_H
#define CNGHTTP2_SHIM_H

#include <nghttp2/nghttp2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

// nghttp2's memory, with every block of CNGHTTP2_PAGED_BYTES or more in pages of its own (mmap) instead of the heap.
// A session allocates its outbound frame buffer (16 KiB and a frame header) at once, and writes only the frames it
// sends into it: a long-lived connection that sends small frames (a feed stream's events; DATA payloads go out
// without copying) touches its first page only. From the heap, those 16 KiB are usually pages other blocks
// touched before, all resident; in pages of their own, the untouched ones cost nothing.
#define CNGHTTP2_PAGED_BYTES 8192

typedef struct { size_t size; size_t paged; } cnghttp2_block;  // 16 bytes: keeps malloc's 16-byte alignment

static inline void *cnghttp2_alloc(size_t size) {
    size_t total = size + sizeof(cnghttp2_block);
    if (total < size) return NULL;
    cnghttp2_block *block;
    if (size >= CNGHTTP2_PAGED_BYTES) {
        void *pages = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (pages == MAP_FAILED) return NULL;
        block = pages;
        block->paged = 1;
    } else {
        block = malloc(total);
        if (block == NULL) return NULL;
        block->paged = 0;
    }
    block->size = size;
    return block + 1;
}

static inline void cnghttp2_free(void *pointer, void *user) {
    (void)user;
    if (pointer == NULL) return;
    cnghttp2_block *block = (cnghttp2_block *)pointer - 1;
    if (block->paged) munmap(block, block->size + sizeof(cnghttp2_block));
    else free(block);
}

static inline void *cnghttp2_malloc(size_t size, void *user) {
    (void)user;
    return cnghttp2_alloc(size);
}

static inline void *cnghttp2_calloc(size_t count, size_t size, void *user) {
    (void)user;
    if (size != 0 && count > (size_t)-1 / size) return NULL;
    void *pointer = cnghttp2_alloc(count * size);
    // Fresh pages are zero already.
    if (pointer != NULL && !((cnghttp2_block *)pointer - 1)->paged) memset(pointer, 0, count * size);
    return pointer;
}

static inline void *cnghttp2_realloc(void *pointer, size_t size, void *user) {
    if (pointer == NULL) return cnghttp2_alloc(size);
    if (size == 0) {
        cnghttp2_free(pointer, user);
        return NULL;
    }
    cnghttp2_block *block = (cnghttp2_block *)pointer - 1;
    if (!block->paged && size < CNGHTTP2_PAGED_BYTES) {
        cnghttp2_block *moved = realloc(block, size + sizeof(cnghttp2_block));
        if (moved == NULL) return NULL;
        moved->size = size;
        return moved + 1;
    }
    void *copy = cnghttp2_alloc(size);
    if (copy == NULL) return NULL;
    memcpy(copy, pointer, block->size < size ? block->size : size);
    cnghttp2_free(pointer, user);
    return copy;
}

/// The allocator above, for nghttp2_session_server_new3.
static inline nghttp2_mem *CNGHTTP2_paged_mem(void) {
    static nghttp2_mem mem = {NULL, cnghttp2_malloc, cnghttp2_free, cnghttp2_calloc, cnghttp2_realloc};
    return &mem;
}

#endif
