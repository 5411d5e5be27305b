/*
 * emit.c - the fast path's output: templates read from <share_dir> with their
 * @KEY@ placeholders filled for one site, and the seed assembled from the
 * program, its edits, the generated EVOLVE-BLOCK and the ABI wrappers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fastpath/lex.h"

static int edit_cmp(const void *a, const void *b)
{
	const struct edit *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	/* an insertion (len 0) at an offset goes before a replacement there */
	return (x->len > 0) - (y->len > 0);
}

/* ---- templates ---- */

/* Append s to sb escaped for the inside of a C string literal. */
void cuco_fastpath_add_c_escaped(struct cuco_strbuf *sb, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			cuco_strbuf_addf(sb, "\\%c", c);
		else if (c == '?')
			cuco_strbuf_adds(sb, "\\?"); /* no trigraphs */
		else if (c < 0x20 || c == 0x7f)
			cuco_strbuf_addf(sb, "\\%03o", c);
		else
			cuco_strbuf_addch(sb, c);
	}
}

struct subst {
	const char *key; /* without the @s */
	const char *value;
};

/* Append template tpl to out with @KEY@ replaced; an unknown @KEY@ is an error. */
static int expand(struct fp *fp, const char *tpl_name, const char *tpl, const struct subst *subs,
                  int nsubs, struct cuco_strbuf *out)
{
	const char *p = tpl;
	while (*p) {
		const char *at = strchr(p, '@');
		if (at == NULL) {
			cuco_strbuf_adds(out, p);
			break;
		}
		cuco_strbuf_add(out, p, (size_t)(at - p));
		const char *end = strchr(at + 1, '@');
		int k = 0;
		for (; end != NULL && k < nsubs; k++)
			if ((size_t)(end - at - 1) == strlen(subs[k].key) &&
			    memcmp(at + 1, subs[k].key, (size_t)(end - at - 1)) == 0)
				break;
		if (end == NULL || k == nsubs)
			return cuco_err_set(fp->err, CUCO_ERR_PARSE,
			                    "template %s: unknown placeholder near '%.20s'",
			                    tpl_name, at);
		cuco_strbuf_adds(out, subs[k].value);
		p = end + 1;
	}
	return CUCO_OK;
}

static int load_template(struct fp *fp, const char *name, struct cuco_strbuf *out)
{
	struct cuco_strbuf path = CUCO_STRBUF_INIT;
	int rc = CUCO_OK;
	const char *home = getenv("CUCO_HOME"), *pre = fp->opts->nvshmem ? "nvshmem_" : "";
	if (fp->opts->share_dir != NULL)
		cuco_strbuf_addf(&path, "%s/%s%s", fp->opts->share_dir, pre, name);
	else if (home != NULL && *home)
		cuco_strbuf_addf(&path, "%s/share/fastpath/%s%s", home, pre, name);
	else {
		rc = cuco_err_set(fp->err, CUCO_ERR_INVALID,
		                  "fast path templates not found: set CUCO_HOME (templates live in "
		                  "$CUCO_HOME/share/fastpath)");
		goto out;
	}
	if (cuco_strbuf_read_file(out, path.buf) != 0)
		rc = cuco_err_set(fp->err, CUCO_ERR_IO, "cannot read fast path template %s: %s",
		                  path.buf, strerror(errno));
out:
	cuco_strbuf_release(&path);
	return rc;
}

/* Expand template name (one site; a = its literal dtype and op, or NULL) into fp->gen. */
int cuco_fastpath_emit(struct fp *fp, const char *name, int id, const struct tok *t,
                       const char *call, const struct site_args *a)
{
	struct cuco_strbuf tpl = CUCO_STRBUF_INIT, site = CUCO_STRBUF_INIT,
	                   site_raw = CUCO_STRBUF_INIT;
	char ids[16], ctas[16], threads[16];
	const char *dtype = a && a->dtype ? a->dtype : "-1", *op = a && a->op ? a->op : "-1";
	int rc;

	/* the nvshmem backend has the all-gather of the GEMM workloads, the all-to-all of the
	 * MoE layer and the seed's frame */
	if (fp->opts->nvshmem && strcmp(name, "common.cu.in") && strcmp(name, "abi.cu.in") &&
	    strcmp(name, "allgather.cu.in") && strcmp(name, "alltoall.cu.in")) {
		if (t != NULL)
			return cuco_err_set(
			    fp->err, CUCO_ERR_UNSUPPORTED,
			    "%s:%d:%d: %s: the nvshmem fast path transforms "
			    "ncclAllGather and ncclAlltoAll only (the GEMM and MoE workloads' "
			    "collectives); use the lsa backend",
			    fp->file, t->line, t->col, call ? call : "grouped ncclSend/ncclRecv");
		return cuco_err_set(
		    fp->err, CUCO_ERR_UNSUPPORTED,
		    "%s: grouped ncclSend/ncclRecv: the nvshmem fast path transforms "
		    "ncclAllGather and ncclAlltoAll only (the GEMM and MoE workloads' "
		    "collectives); use the lsa backend",
		    fp->file);
	}
	rc = load_template(fp, name, &tpl);
	if (rc != CUCO_OK)
		goto out;
	snprintf(ids, sizeof(ids), "%d", id);
	snprintf(ctas, sizeof(ctas), "%d", fp->opts->comm_ctas);
	snprintf(threads, sizeof(threads), "%d", fp->opts->threads);
	if (t != NULL)
		cuco_strbuf_addf(&site_raw, "%s:%d:%d", fp->file, t->line, t->col);
	cuco_fastpath_add_c_escaped(&site, site_raw.buf);
	struct subst subs[] = {
	    {"ID", ids},         {"SITE", site.buf},   {"CALL", call ? call : ""},
	    {"COMM_CTAS", ctas}, {"THREADS", threads}, {"DTYPE", dtype},
	    {"OP", op},
	};
	rc = expand(fp, name, tpl.buf, subs, (int)(sizeof(subs) / sizeof(subs[0])), &fp->gen);
out:
	cuco_strbuf_release(&tpl);
	cuco_strbuf_release(&site);
	cuco_strbuf_release(&site_raw);
	return rc;
}

/* ---- output ---- */

int cuco_fastpath_assemble(struct fp *fp, struct cuco_strbuf *out)
{
	struct cuco_strbuf block = CUCO_STRBUF_INIT, abi = CUCO_STRBUF_INIT, tmp = CUCO_STRBUF_INIT,
	                   name = CUCO_STRBUF_INIT;
	int rc;
	size_t pos = 0, insert_at = fp->toks.first_code;
	int groups = fp->report->ngroups > 0;

	/* the EVOLVE-BLOCK: common helpers, send/recv machinery, per-site code */
	struct cuco_strbuf saved = fp->gen;
	cuco_strbuf_init(&fp->gen, 0);
	rc = cuco_fastpath_emit(fp, "common.cu.in", 0, NULL, NULL, NULL);
	if (rc == CUCO_OK && groups)
		rc = cuco_fastpath_emit(fp, "sendrecv.cu.in", 0, NULL, NULL, NULL);
	if (rc == CUCO_OK) {
		cuco_strbuf_add(&block, fp->gen.buf, fp->gen.len);
		cuco_strbuf_reset(&fp->gen);
		rc = cuco_fastpath_emit(fp, "abi.cu.in", 0, NULL, NULL, NULL);
	}
	cuco_strbuf_add(&abi, fp->gen.buf, fp->gen.len);
	cuco_strbuf_release(&fp->gen);
	fp->gen = saved;
	if (rc != CUCO_OK)
		goto out;

	/* nvshmem: a barrier of every PE on the stream around the puts, so grid scope */
	cuco_strbuf_addf(&tmp,
	                 "// cuco-directive: {\"backend\":\"%s\",\"placement\":\"sequential\","
	                 "\"sync_scope\":\"%s\",\"issuer\":\"cta\",\"granularity\":\"whole\","
	                 "\"knobs\":{\"comm_ctas\":%d,\"threads\":%d}}\n",
	                 fp->opts->nvshmem ? "nvshmem" : "lsa", fp->opts->nvshmem ? "grid" : "cta",
	                 fp->opts->comm_ctas, fp->opts->threads);
	/* the file name goes into a // comment: keep it on one line */
	for (const char *p = fp->file; *p; p++)
		cuco_strbuf_addch(&name, (*p == '\n' || *p == '\r') ? '?' : *p);
	cuco_strbuf_addf(&tmp,
	                 "// Generated by cuco's fast path from %s: each host collective is "
	                 "replaced by a\n// device-initiated %s kernel launched on the same "
	                 "stream.\n",
	                 name.buf, fp->opts->nvshmem ? "NVSHMEM" : "LSA (NCCL device API)");

	qsort(fp->edits.v, (size_t)fp->edits.n, sizeof(*fp->edits.v), edit_cmp);
	int inserted = 0;
	for (int k = 0; k <= fp->edits.n; k++) {
		size_t next = k < fp->edits.n ? fp->edits.v[k].off : fp->len;
		if (!inserted && insert_at <= next) {
			cuco_strbuf_add(&tmp, fp->src + pos, insert_at - pos);
			pos = insert_at;
			if (tmp.len > 0 && tmp.buf[tmp.len - 1] != '\n')
				cuco_strbuf_addch(&tmp, '\n');
			cuco_strbuf_adds(&tmp, "#include <cuco_dev/lsa.cuh>\n");
			if (fp->opts->nvshmem)
				cuco_strbuf_adds(&tmp, "#include <cuco_dev/nvshmem.cuh>\n");
			cuco_strbuf_adds(&tmp, "#include <cuco_dev/launch.cuh>\n"
			                       "#include <cuda_bf16.h>\n"
			                       "#include <cuda_fp16.h>\n"
			                       "#include <stdarg.h>\n"
			                       "#include <stdio.h>\n"
			                       "#include <string.h>\n"
			                       "#include <type_traits>\n\n"
			                       "// EVOLVE-BLOCK-START\n");
			cuco_strbuf_addf(&tmp, "#define CUCO_SEED_HAS_GROUPS %d\n", groups);
			cuco_strbuf_add(&tmp, block.buf, block.len);
			cuco_strbuf_add(&tmp, fp->gen.buf, fp->gen.len);
			cuco_strbuf_adds(&tmp, "// EVOLVE-BLOCK-END\n\n");
			inserted = 1;
		}
		if (k == fp->edits.n)
			break;
		const struct edit *e = &fp->edits.v[k];
		cuco_strbuf_add(&tmp, fp->src + pos, e->off - pos);
		cuco_strbuf_adds(&tmp, e->text);
		pos = e->off + e->len;
	}
	cuco_strbuf_add(&tmp, fp->src + pos, fp->len - pos);
	if (tmp.len > 0 && tmp.buf[tmp.len - 1] != '\n')
		cuco_strbuf_addch(&tmp, '\n');
	cuco_strbuf_add(&tmp, abi.buf, abi.len);
	cuco_strbuf_add(out, tmp.buf, tmp.len);
out:
	cuco_strbuf_release(&block);
	cuco_strbuf_release(&abi);
	cuco_strbuf_release(&tmp);
	cuco_strbuf_release(&name);
	return rc;
}
