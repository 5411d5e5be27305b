/* hash.c - SHA-256 through libcrypto's EVP digests (hash.h). */
#include "hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

/* libcrypto failing to hash in memory is out of memory or a broken library: nothing to go on. */
static void die(const char *what)
{
	fprintf(stderr, "cuco: libcrypto: %s failed (SHA-256)\n", what);
	abort();
}

void cuco_sha256_init(struct cuco_sha256 *c)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
		die("EVP_DigestInit_ex");
	c->ctx = ctx;
}

void cuco_sha256_update(struct cuco_sha256 *c, const void *data, size_t n)
{
	if (n && EVP_DigestUpdate(c->ctx, data, n) != 1)
		die("EVP_DigestUpdate");
}

void cuco_sha256_hex(struct cuco_sha256 *c, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	if (EVP_DigestFinal_ex(c->ctx, md, &len) != 1 || len != 32)
		die("EVP_DigestFinal_ex");
	EVP_MD_CTX_free(c->ctx);
	c->ctx = NULL;
	for (unsigned int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

void cuco_hash_string(const char *s, char hex[65])
{
	struct cuco_sha256 c;

	cuco_sha256_init(&c);
	cuco_sha256_update(&c, s, strlen(s));
	cuco_sha256_hex(&c, hex);
}
