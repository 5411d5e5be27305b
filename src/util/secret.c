/* secret.c - registered secrets and their redaction (secret.h). */
#include "util/secret.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char *secrets[CUCO_SECRET_MAX];
static int nsecrets;

/* Variables cuco_secret_env read, and their values ("" for unset). */
static pthread_mutex_t env_mu = PTHREAD_MUTEX_INITIALIZER;
static char *env_names[CUCO_SECRET_MAX], *env_values[CUCO_SECRET_MAX];
static int nenv;

extern char **environ;

const char *cuco_secret_env(const char *name)
{
	const char *out = NULL, *v;
	size_t n = name ? strlen(name) : 0;
	int i;

	if (!n || strchr(name, '='))
		return NULL;
	pthread_mutex_lock(&env_mu);
	for (i = 0; i < nenv; i++)
		if (!strcmp(env_names[i], name))
			break;
	v = getenv(name); /* NULL once scrubbed, unless someone set it again */
	if (i == nenv && nenv < CUCO_SECRET_MAX) {
		env_names[nenv] = cuco_xstrdup(name);
		env_values[nenv++] = cuco_xstrdup("");
	}
	if (i < nenv && v) {
		free(env_values[i]);
		env_values[i] = cuco_xstrdup(v);
		cuco_secret_add(v);
		/* every copy in the environment, in place: getenv's pointer is into the block
		 * the kernel shows as /proc/PID/environ */
		for (char **e = environ; e && *e; e++)
			if (!strncmp(*e, name, n) && (*e)[n] == '=')
				memset(*e + n + 1, 'X', strlen(*e + n + 1));
		unsetenv(name);
	}
	if (i < nenv && env_values[i][0])
		out = env_values[i];
	pthread_mutex_unlock(&env_mu);
	return out;
}

int cuco_secret_env_name(const char *name, size_t len)
{
	int hit = 0;

	pthread_mutex_lock(&env_mu);
	for (int i = 0; i < nenv && !hit; i++)
		hit = strlen(env_names[i]) == len && !strncmp(env_names[i], name, len);
	pthread_mutex_unlock(&env_mu);
	return hit;
}

void cuco_secret_add(const char *s)
{
	if (!s || strlen(s) < CUCO_SECRET_MIN)
		return;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nsecrets; i++)
		if (!strcmp(secrets[i], s))
			goto out;
	if (nsecrets < CUCO_SECRET_MAX)
		secrets[nsecrets++] = cuco_xstrdup(s);
out:
	pthread_mutex_unlock(&mu);
}

/*
 * Under mu: the length of the longest tail of s (len bytes) that opens a
 * secret, at least 4 bytes (a message cut off in the middle of the key); 0:
 * none.
 */
static size_t cut_tail(const char *s, size_t len)
{
	size_t best = 0;

	for (int i = 0; i < nsecrets; i++)
		for (size_t n = strlen(secrets[i]) - 1; n >= 4 && n > best; n--)
			if (n <= len && !memcmp(s + len - n, secrets[i], n)) {
				best = n;
				break;
			}
	return best;
}

int cuco_secret_in(const char *s)
{
	int hit = 0;

	if (!s)
		return 0;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nsecrets && !hit; i++)
		hit = strstr(s, secrets[i]) != NULL;
	if (!hit)
		hit = cut_tail(s, strlen(s)) > 0;
	pthread_mutex_unlock(&mu);
	return hit;
}

char *cuco_secret_redact(const char *s)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	if (!s)
		return NULL;
	cuco_strbuf_adds(&sb, s);
	pthread_mutex_lock(&mu);
	for (int i = 0; i < nsecrets; i++) {
		struct cuco_strbuf next = CUCO_STRBUF_INIT;
		size_t klen = strlen(secrets[i]);
		const char *p = sb.buf, *hit;

		if (!strstr(p, secrets[i]))
			continue;
		while ((hit = strstr(p, secrets[i]))) {
			cuco_strbuf_add(&next, p, (size_t)(hit - p));
			cuco_strbuf_adds(&next, CUCO_SECRET_MARK);
			p = hit + klen;
		}
		cuco_strbuf_adds(&next, p);
		cuco_strbuf_release(&sb);
		sb = next;
	}
	{
		size_t cut = cut_tail(sb.buf, sb.len);
		if (cut) {
			cuco_strbuf_setlen(&sb, sb.len - cut);
			cuco_strbuf_adds(&sb, CUCO_SECRET_MARK);
		}
	}
	pthread_mutex_unlock(&mu);
	return cuco_strbuf_detach(&sb, NULL);
}

void cuco_secret_redact_buf(char *buf, size_t size)
{
	char *r;

	if (!buf || !size || !cuco_secret_in(buf))
		return;
	r = cuco_secret_redact(buf);
	snprintf(buf, size, "%s", r);
	free(r);
}
