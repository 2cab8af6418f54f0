#include <zlib.h>

// deflateInit2 is a macro (it passes ZLIB_VERSION and sizeof(z_stream)); Swift cannot call it.
// windowBits 15 + 16 asks for the gzip wrapper (RFC 1952) instead of zlib's (RFC 1950).
static inline int czlib_deflate_init_gzip(z_streamp stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

// inflateInit2 is a macro for the same reason; 15 + 16 accepts only the gzip wrapper.
static inline int czlib_inflate_init_gzip(z_streamp stream) {
    return inflateInit2(stream, 15 + 16);
}

// windowBits -15: raw deflate (RFC 1951) with no wrapper, for a gzip member whose header, pieces and trailer
// the caller puts together itself.
static inline int czlib_deflate_init_raw(z_streamp stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}
