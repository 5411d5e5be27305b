/* reply_check.c - a candidate's code against its directive; the multicast scan. */
#include "llm/reply_check.h"
#include "util/codescan.h"

#include <string.h>

/* code without comments and string/char literals (replaced by a blank). */
static void strip_comments(const char *s, struct cuco_strbuf *out)
{
	while (*s) {
		if (s[0] == '/' && s[1] == '/') {
			while (*s && *s != '\n')
				s++;
		} else if (s[0] == '/' && s[1] == '*') {
			s += 2;
			while (*s && !(s[0] == '*' && s[1] == '/'))
				s++;
			if (*s)
				s += 2;
			cuco_strbuf_addch(out, ' ');
		} else if (*s == '"' || *s == '\'') {
			char q = *s++;

			while (*s && *s != q && *s != '\n') {
				if (*s == '\\' && s[1])
					s++;
				s++;
			}
			if (*s == q)
				s++;
			cuco_strbuf_addch(out, ' ');
		} else {
			cuco_strbuf_addch(out, *s++);
		}
	}
}

static int has_any(const char *code, const char *const *words)
{
	for (; *words; words++)
		if (strstr(code, *words))
			return 1;
	return 0;
}

static const char *const ce_calls[] = {"cudaMemcpyAsync",
                                       "cudaMemcpyPeerAsync",
                                       "cudaMemcpy2DAsync",
                                       "cudaMemcpy3DAsync",
                                       "cudaMemcpy3DPeerAsync",
                                       "cuMemcpy",
                                       NULL};
static const char *const lsa_calls[] = {"lsa_peer", "ncclGetLsaPointer", "ncclGetPeerPointer",
                                        NULL};
static const char *const gin_calls[] = {"ncclGin", "gin_session", NULL};
static const char *const stream_calls[] = {"cudaStreamCreate", "cuStreamCreate", NULL};

int cuco_llm_directive_check_code(const struct cuco_directive *d, const char *code,
                                  struct cuco_strbuf *flags)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;
	const char *backend = d->dims[CUCO_DIM_BACKEND], *placement = d->dims[CUCO_DIM_PLACEMENT];
	int n = 0;

	strip_comments(code, &sb);
	if (strcmp(backend, "ce") == 0 && !has_any(sb.buf, ce_calls)) {
		cuco_strbuf_adds(flags, "directive says backend \"ce\" but the code has no "
		                        "cudaMemcpy*Async or cuMemcpy* call\n");
		n++;
	}
	if (strcmp(backend, "lsa") == 0 && !has_any(sb.buf, lsa_calls)) {
		cuco_strbuf_adds(flags, "directive says backend \"lsa\" but the code takes no peer "
		                        "pointer (lsa_peer, ncclGetLsaPointer)\n");
		n++;
	}
	if (strcmp(backend, "gin") == 0 && !has_any(sb.buf, gin_calls)) {
		cuco_strbuf_adds(flags, "directive says backend \"gin\" but the code never uses "
		                        "ncclGin (or cuco::gin_session)\n");
		n++;
	}
	if (strcmp(placement, "sequential") == 0 && has_any(sb.buf, stream_calls)) {
		cuco_strbuf_adds(flags, "directive says placement \"sequential\" but the code "
		                        "creates a second stream (cudaStreamCreate*)\n");
		n++;
	}
	if (strcmp(placement, "stream_overlap") == 0 && !has_any(sb.buf, stream_calls)) {
		cuco_strbuf_adds(flags, "directive says placement \"stream_overlap\" but the code "
		                        "creates no second stream\n");
		n++;
	}
	cuco_strbuf_release(&sb);
	return n;
}

/*
 * 1 when the code uses multicast in any spelling (identifiers, literals
 * joined) or a way around its ban (util/codescan.h); the rejection, naming
 * the lines, in why.
 */
int cuco_reply_uses_multicast(const char *code, struct cuco_strbuf *why)
{
	struct cuco_strbuf found = CUCO_STRBUF_INIT;
	int hit = cuco_codescan_multicast(code, &found) > 0;

	if (hit)
		cuco_strbuf_addf(
		    why,
		    "the code uses multicast (multimem/NVLS) or a way around its ban, "
		    "which is forbidden on cuco's machines; use LSA loads and stores or "
		    "the copy engine:\n%s",
		    found.buf);
	cuco_strbuf_release(&found);
	return hit;
}
