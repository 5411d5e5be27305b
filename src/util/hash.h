/* hash.h - SHA-256 content hashes (compile cache keys, program identity). */
#ifndef CUCO_HASH_H
#define CUCO_HASH_H

#include <stddef.h>
#include <stdint.h>

struct cuco_sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t nbuf;
};

void cuco_sha256_init(struct cuco_sha256 *c);
void cuco_sha256_update(struct cuco_sha256 *c, const void *data, size_t n);
/* Finish and write 64 lowercase hex digits and a NUL into hex[65]. */
void cuco_sha256_hex(struct cuco_sha256 *c, char hex[65]);
/* One-shot hex digest of a string. */
void cuco_hash_string(const char *s, char hex[65]);

#endif
