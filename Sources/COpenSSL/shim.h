#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>

// Swift cannot import OpenSSL macros; each wrapper below replaces the macro it names.

// SSL_CTX_set_min_proto_version
static inline int COpenSSL_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}

// SSL_CTX_set_max_proto_version
static inline int COpenSSL_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_max_proto_version(ctx, version);
}

// SSL_set_min_proto_version
static inline int COpenSSL_SSL_set_min_proto_version(SSL *ssl, int version) {
    return SSL_set_min_proto_version(ssl, version);
}

// SSL_set_max_proto_version
static inline int COpenSSL_SSL_set_max_proto_version(SSL *ssl, int version) {
    return SSL_set_max_proto_version(ssl, version);
}

// SSL_CTX_set_mode
static inline long COpenSSL_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

// SSL_CTX_set_session_cache_mode
static inline long COpenSSL_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

// SSL_CTX_set1_groups_list
static inline int COpenSSL_SSL_CTX_set1_groups_list(SSL_CTX *ctx, const char *list) {
    return (int)SSL_CTX_set1_groups_list(ctx, list);
}

// SSL_set_tlsext_host_name
static inline int COpenSSL_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

// SSL_OP_* constants used by the server context.
static inline unsigned long long COpenSSL_server_options(void) {
    return SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE
        | SSL_OP_NO_SSLv3 | SSL_OP_NO_TLSv1 | SSL_OP_NO_TLSv1_1;
}

// SSL_OP_* constants a test client may need to allow legacy protocols.
static inline int COpenSSL_TLS1_1_VERSION(void) { return TLS1_1_VERSION; }
static inline int COpenSSL_TLS1_2_VERSION(void) { return TLS1_2_VERSION; }
static inline int COpenSSL_TLS1_3_VERSION(void) { return TLS1_3_VERSION; }

#endif
