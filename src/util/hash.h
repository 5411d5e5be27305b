/*
 * hash.h - SHA-256 content hashes (compile cache keys, program identity),
 * computed by libcrypto (OpenSSL's EVP interface).
 */
#ifndef CUCO_HASH_H
#define CUCO_HASH_H

#include <stddef.h>

/* A hash in progress: cuco_sha256_init, _update, then _hex (which releases it). */
struct cuco_sha256 {
	void *ctx; /* libcrypto's EVP_MD_CTX */
};

/* Start a hash (out of memory, or a libcrypto without SHA-256: cuco aborts). */
void cuco_sha256_init(struct cuco_sha256 *c);
void cuco_sha256_update(struct cuco_sha256 *c, const void *data, size_t n);
/* Finish and write 64 lowercase hex digits and a NUL into hex[65]; c is released. */
void cuco_sha256_hex(struct cuco_sha256 *c, char hex[65]);
/* One-shot hex digest of a string. */
void cuco_hash_string(const char *s, char hex[65]);

#endif
