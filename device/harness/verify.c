/*
 * verify.c - the checks of a program's outputs, and the guards on what a
 * program's numbers may come from (docs/sandbox.md). Before every run, timed
 * or checked, its inouts are put back and its outputs poisoned. A check
 * compares the outputs with the reference when its runs have ended on the
 * harness's stream and again when the device has drained (work left on a
 * stream the harness does not wait for shows as the difference), and finds no
 * persisting-L2 window left behind (lines kept in L2 would time the next runs
 * on warm data). The checks: one run before timing, the last timed run, runs
 * back to back, one run per further verification on fresh inputs, and one run
 * whose outputs were not poisoned first.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "state.h"

const char *hx_check_name(enum hx_check c)
{
	switch (c) {
	case HX_CHECK_FIRST:
		return "first";
	case HX_CHECK_LAST_TIMED:
		return "last_timed";
	case HX_CHECK_B2B:
		return "back_to_back";
	case HX_CHECK_FRESH:
		return "fresh";
	case HX_CHECK_UNPOISONED:
		return "unpoisoned";
	}
	return "unknown";
}

void hx_poison_outputs(struct hx_state *st, struct cuco_tensor *set)
{
	/* All-ones bytes are NaN in bf16, f16, f32 and f64: unwritten elements fail. */
	for (int i = 0; i < st->ntensors; i++)
		if (set[i].role == CUCO_ROLE_OUTPUT)
			CUDA_OR_DIE(
			    st, cudaMemsetAsync(set[i].ptr, 0xff, st->sym_bytes[i], st->stream));
}

void hx_restore_inouts(struct hx_state *st, int set)
{
	for (int i = 0; st->has_inout && i < st->ntensors; i++)
		if (st->pristine[set][i])
			CUDA_OR_DIE(st, cudaMemcpyAsync(st->sets[set][i].ptr, st->pristine[set][i],
			                                st->sym_bytes[i], cudaMemcpyDeviceToDevice,
			                                st->stream));
}

void hx_before_run(struct hx_state *st, int set)
{
	hx_restore_inouts(st, set);
	hx_poison_outputs(st, st->sets[set]);
}

int hx_run_once(struct hx_state *st, struct hx_program *p, void *state, int set)
{
	int rc = p->run(state, st->sets[set], st->stream);
	if (rc)
		return rc;
	return cudaPeekAtLastError() != cudaSuccess ? -1 : 0;
}

/* Tensor i is compared bit for bit: the workload asks for it, or its dtype is an integer. */
static int exact(const struct hx_state *st, int i)
{
	return st->layout[i].compare == CUCO_COMPARE_EXACT ||
	       hx_dtype_is_integer(st->layout[i].dtype);
}

/* Enqueue every verified tensor's comparison of set `set` with expected[] into
 * st->dcmp[slot + i]. */
static void compare_outputs(struct hx_state *st, int set, void *const *expected, int slot)
{
	for (int i = 0; i < st->ntensors; i++)
		if (hx_role_verified(st->layout[i].role) &&
		    hx_dev_compare_start(st->sets[set][i].ptr, expected[i], st->layout[i].elems,
		                         st->layout[i].dtype, exact(st, i), &st->dcmp[slot + i],
		                         st->stream))
			hx_die(st, CUCO_ERR_RUN, "comparing output '%s' failed: %s",
			       st->layout[i].name, cudaGetErrorString(cudaGetLastError()));
}

/* The sums of one comparison of every tensor: v[0] elements checked, then per tensor i, at
 * 1 + 4 * i: squared difference, squared reference, non-finite, mismatched. */
#define SUMS (1 + 4 * CUCO_MAX_TENSORS)

/*
 * The verdict of the comparisons in v (SUMS sums, already agreed over the ranks). The verdict
 * takes each verified tensor alone: one compared exactly passes with no element that differs;
 * one compared closely passes with no non-finite element and its relative L2 error within its
 * tolerance (one L2 over all outputs would let a large tensor, say an LSE of magnitude 10,
 * hide a wrong small one, an attention output of magnitude 0.1). rel_err is the largest over
 * the close ones, worst names its tensor; failed names the first tensor that fails.
 */
static struct hx_verdict verdict(const struct hx_state *st, const double *v, double mx)
{
	struct hx_verdict res;

	memset(&res, 0, sizeof(res));
	res.worst = res.failed = -1;
	for (int i = 0; i < st->ntensors; i++) {
		const double *t = v + 1 + 4 * i;
		double d2 = t[0], r2 = t[1], tol = st->o->tolerance, e = 0;
		int ex = exact(st, i), bad;

		if (!hx_role_verified(st->layout[i].role))
			continue;
		res.nonfinite += t[2];
		res.mismatched += t[3];
		if (ex) {
			bad = t[2] > 0 || t[3] > 0;
		} else {
			e = r2 > 0 ? sqrt(d2 / r2) : (d2 > 0 ? INFINITY : 0);
			if (st->layout[i].tolerance > 0)
				tol = st->layout[i].tolerance;
			if (res.worst < 0 || e > res.rel_err) {
				res.rel_err = e;
				res.worst = i;
			}
			bad = t[2] > 0 || !(e <= tol); /* a NaN error fails */
		}
		if (bad && res.failed < 0) {
			res.failed = i;
			res.failed_exact = ex;
			res.failed_rel_err = e;
			res.failed_tolerance = tol;
			res.failed_mismatched = t[3];
		}
	}
	res.max_abs = mx;
	res.checked = v[0];
	res.ok = res.failed < 0;
	return res;
}

/* The comparisons in slots base (the runs' end) and base + CUCO_MAX_TENSORS (drained), over
 * all ranks. */
static void agree_verdicts(struct hx_state *st, int base, struct hx_verdict *end,
                           struct hx_verdict *drained)
{
	struct hx_compare c[2 * CUCO_MAX_TENSORS];
	double v[2 * SUMS] = {0}, mx[2] = {0, 0};

	CUDA_OR_DIE(
	    st, cudaMemcpyAsync(c, st->dcmp + base, sizeof(c), cudaMemcpyDeviceToHost, st->stream));
	CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < st->ntensors; i++) {
			const struct hx_compare *x = &c[k * CUCO_MAX_TENSORS + i];
			double *w = v + k * SUMS;

			if (!hx_role_verified(st->layout[i].role))
				continue;
			w[0] += (double)x->checked;
			w[1 + 4 * i] += x->diff2;
			w[2 + 4 * i] += x->ref2;
			w[3 + 4 * i] += (double)x->nonfinite;
			w[4 + 4 * i] += (double)x->mismatched;
			if (x->max_abs > mx[k])
				mx[k] = x->max_abs;
		}
	hx_agree(st, v, 2 * SUMS, ncclSum);
	hx_agree(st, mx, 2, ncclMax);
	*end = verdict(st, v, mx[0]);
	*drained = verdict(st, v + SUMS, mx[1]);
}

/* The same outputs, compared twice: equal but for the order of floating-point sums. */
static int same_verdict(const struct hx_verdict *a, const struct hx_verdict *b)
{
	return a->nonfinite == b->nonfinite && a->checked == b->checked &&
	       a->mismatched == b->mismatched &&
	       fabs(a->rel_err - b->rel_err) <= 1e-6 * (a->rel_err + 1e-30) + 1e-12;
}

/*
 * A persisting-L2 carve-out or access-policy window that the program set: lines kept in L2
 * across runs would time later runs on warm data. cuco's source check refuses the names
 * (src/util/codescan.c); this catches the ones it cannot see (a numeric enum, a driver entry
 * point looked up at run time).
 */
static int l2_guard(struct hx_state *st, char *err, size_t errlen)
{
	size_t limit = 0;
	cudaStreamAttrValue w;

	memset(&w, 0, sizeof(w));
	CUDA_OR_DIE(st, cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize));
	CUDA_OR_DIE(st,
	            cudaStreamGetAttribute(st->stream, cudaStreamAttributeAccessPolicyWindow, &w));
	if (limit != st->l2_persist_limit) {
		snprintf(err, errlen,
		         "refused: the program set the persisting-L2 limit to %zu bytes (was %zu); "
		         "lines kept in L2 across runs would time it on warm data",
		         limit, st->l2_persist_limit);
		return CUCO_ERR_RUN;
	}
	if (w.accessPolicyWindow.num_bytes) {
		snprintf(
		    err, errlen,
		    "refused: the program set an L2 access-policy window of %zu bytes on the "
		    "harness's stream; lines kept in L2 across runs would time it on warm data",
		    w.accessPolicyWindow.num_bytes);
		return CUCO_ERR_RUN;
	}
	return 0;
}

void hx_l2_restore(struct hx_state *st)
{
	cudaStreamAttrValue w;

	memset(&w, 0, sizeof(w));
	CUDA_OR_DIE(st,
	            cudaStreamSetAttribute(st->stream, cudaStreamAttributeAccessPolicyWindow, &w));
	CUDA_OR_DIE(st, cudaCtxResetPersistingL2Cache());
	CUDA_OR_DIE(st, cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, st->l2_persist_limit));
}

/* The outputs of one set judged after a check's runs: which set, against what, and how an error
 * names them ("output", "the last timed run's output"). */
struct target {
	int set;
	void *const *expected;
	const char *what;
};

/* The error for one target's verdicts (end: the runs' end, drained: the device drained), or 0;
 * *differs = 1 when the output simply differs from the reference. */
static int verdict_error(const struct hx_state *st, const char *what, struct hx_verdict *v,
                         const struct hx_verdict *drained, char *err, size_t errlen, int *differs)
{
	if (!v->ok && drained->ok) {
		snprintf(err, errlen,
		         "%s was not complete when the run ended on the harness's stream (rel_err "
		         "%.3g, %.0f non-finite, %.0f mismatched) but was once the device had "
		         "drained: the program writes it on a stream it does not join to the "
		         "harness's",
		         what, v->rel_err, v->nonfinite, v->mismatched);
		return CUCO_ERR_VERIFY;
	}
	if (v->ok && !same_verdict(v, drained)) {
		*v = *drained;
		snprintf(
		    err, errlen,
		    "%s changed after the run had ended on the harness's stream (rel_err %.3g, "
		    "%.0f non-finite, %.0f mismatched once the device had drained): the "
		    "program writes it on a stream it does not join to the harness's",
		    what, drained->rel_err, drained->nonfinite, drained->mismatched);
		return CUCO_ERR_VERIFY;
	}
	if (v->ok)
		return 0;
	*differs = 1;
	if (v->failed_exact)
		snprintf(err, errlen,
		         "%s differs from the reference: %.0f elements of '%s' not bitwise equal "
		         "(exact compare), %.0f non-finite of %.0f elements",
		         what, v->failed_mismatched, st->layout[v->failed].name, v->nonfinite,
		         v->checked);
	else
		snprintf(err, errlen,
		         "%s differs from the reference: rel_err %.3g of '%s' (close compare, "
		         "tolerance %.3g), %.0f non-finite of %.0f elements",
		         what, v->failed_rel_err, st->layout[v->failed].name, v->failed_tolerance,
		         v->nonfinite, v->checked);
	return CUCO_ERR_VERIFY;
}

/*
 * Judge the runs just enqueued: run_code nonzero when one of them failed; else each target's
 * verified tensors compared right behind them on the harness's stream, the device drained, and
 * compared again; the first target that fails gives the error; then the persisting-L2 guard.
 * 0 with *v (the last target's verdict, or the failed one's), or a code with err, agreed.
 */
static int judge(struct hx_state *st, const struct target *tg, int nt, int run_code,
                 const char *run_err, struct hx_verdict *v, char *err, size_t errlen, int *differs)
{
	int code = 0;

	*differs = 0;
	if (run_code) {
		snprintf(err, errlen, "run: %s", run_err[0] ? run_err : "launch failed");
		code = CUCO_ERR_RUN;
	} else {
		/* Right behind the runs: what their end on this stream saw. */
		for (int t = 0; t < nt; t++)
			compare_outputs(st, tg[t].set, tg[t].expected, 2 * t * CUCO_MAX_TENSORS);
	}
	/* Everything the program started, on any stream. */
	CUDA_OR_DIE(st, cudaDeviceSynchronize());
	if (hx_agree_code(st, code))
		return code ? code : CUCO_ERR_RUN;
	for (int t = 0; t < nt; t++)
		compare_outputs(st, tg[t].set, tg[t].expected, (2 * t + 1) * CUCO_MAX_TENSORS);
	for (int t = 0; t < nt; t++) {
		struct hx_verdict drained;

		agree_verdicts(st, 2 * t * CUCO_MAX_TENSORS, v, &drained);
		code = verdict_error(st, tg[t].what, v, &drained, err, errlen, differs);
		if (code)
			return code;
	}
	code = l2_guard(st, err, errlen);
	return hx_agree_code(st, code) ? (code ? code : CUCO_ERR_RUN) : 0;
}

/* Append to err what a plain difference means in this check. */
static void explain(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void explain(char *err, size_t errlen, const char *fmt, ...)
{
	size_t n = strlen(err);
	va_list ap;

	if (n + 1 >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
}

int hx_verify(struct hx_state *st, struct hx_program *p, void *state, const char *run_err,
              enum hx_check check, int k, struct hx_verdict *v, char *err, size_t errlen)
{
	int fk = check == HX_CHECK_FRESH ? HX_FRESH_SINGLE + k : HX_FRESH_BARE, differs, code;
	struct target tg = {0, st->expected, "output"};

	if (check == HX_CHECK_FIRST) {
		hx_set_inputs(st, 0, hx_input_seed(st, 0));
	} else {
		tg.expected = st->fresh[fk];
		hx_set_inputs(st, 0, hx_fresh_seed(st, fk));
	}
	/* Unpoisoned: the outputs hold what the last run on set 0 left, an earlier run's result. */
	if (check != HX_CHECK_UNPOISONED)
		hx_poison_outputs(st, st->sets[0]);
	code = judge(st, &tg, 1, hx_run_once(st, p, state, 0) ? CUCO_ERR_RUN : 0, run_err, v, err,
	             errlen, &differs);
	if (differs && check == HX_CHECK_FRESH)
		explain(
		    err, errlen,
		    " (verification %d of %d, after timing, on inputs no earlier run had seen): "
		    "the result moves between runs (a race) or repeats an earlier run's",
		    k + 2, st->nfresh - HX_FRESH_SINGLE + 1);
	else if (differs && check == HX_CHECK_UNPOISONED)
		explain(err, errlen,
		        " on a run whose outputs were not poisoned first (they held an earlier "
		        "run's result; inputs no earlier run had seen): the program skips work "
		        "when it finds its outputs already written, or reads them before writing "
		        "them");
	return code;
}

int hx_check_last_timed(struct hx_state *st, struct hx_verdict *v, char *err, size_t errlen)
{
	struct target tg = {0, st->expected, "the last timed run's output"};
	int differs, code = judge(st, &tg, 1, 0, "", v, err, errlen, &differs);

	if (differs)
		explain(err, errlen,
		        ": its timed runs do not compute what its checked runs do (work skipped "
		        "while timed, or a run that reads what an earlier run left)");
	return code;
}

int hx_back_to_back(struct hx_state *st, struct hx_program *p, void *state, const char *run_err,
                    struct hx_verdict *v, char *err, size_t errlen)
{
	int two = st->nsets >= 2, run_code = 0, differs, code;
	struct target tg[HX_MAX_TARGETS];
	char what[HX_MAX_TARGETS][96];

	/* Each set its own fresh inputs: a run that reads what the run before it left, or that
	 * overlaps it, sees another problem's data. */
	if (two)
		hx_set_inputs(st, 1, hx_fresh_seed(st, HX_FRESH_B2B_ODD));
	hx_set_inputs(st, 0, hx_fresh_seed(st, HX_FRESH_B2B_LAST));
	for (int j = 0; j < HX_B2B_RUNS && !run_code; j++) {
		int set = two && j % 2 == 0 ? 1 : 0;

		hx_before_run(st, set);
		if (hx_run_once(st, p, state, set))
			run_code = CUCO_ERR_RUN;
	}
	snprintf(what[0], sizeof(what[0]), "the output of run %d of %d back-to-back runs",
	         two ? HX_B2B_RUNS - 1 : HX_B2B_RUNS, HX_B2B_RUNS);
	snprintf(what[1], sizeof(what[1]), "the output of run %d of %d back-to-back runs",
	         HX_B2B_RUNS, HX_B2B_RUNS);
	tg[0] =
	    (struct target){two, st->fresh[two ? HX_FRESH_B2B_ODD : HX_FRESH_B2B_LAST], what[0]};
	tg[1] = (struct target){0, st->fresh[HX_FRESH_B2B_LAST], what[1]};
	code = judge(st, tg, two ? 2 : 1, run_code, run_err, v, err, errlen, &differs);
	if (differs)
		explain(err, errlen,
		        " (no synchronisation between the runs, each set on inputs no earlier run "
		        "had seen): runs that overlap corrupt each other (a barrier or handshake "
		        "dropped), or a run reads what an earlier run left or repeats an earlier "
		        "run's result");
	return code;
}

void hx_set_inputs(struct hx_state *st, int set, uint64_t seed)
{
	/* every rank takes the same branch: the seeds are the same everywhere */
	if (st->set_seed[set] != seed)
		hx_fill_inputs(st, set, seed);
	else
		hx_restore_inouts(st, set);
}
