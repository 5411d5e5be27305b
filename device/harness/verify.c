/*
 * verify.c - one verification of one program, and the guards on what a
 * program's numbers may come from (docs/sandbox.md): inouts put back and
 * outputs poisoned before the run, compared with the reference when the run has ended on the
 * harness's stream and again when the device has drained (work left on a
 * stream the harness does not wait for shows as the difference), and no
 * persisting-L2 window left behind (lines kept in L2 would time the next runs
 * on warm data).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rank.h"

void hx_poison_outputs(struct hx_state *st, struct cuco_tensor *set)
{
	/* All-ones bytes are NaN in bf16, f16, f32 and f64: unwritten elements fail. */
	for (int i = 0; i < st->ntensors; i++)
		if (set[i].role == CUCO_ROLE_OUTPUT)
			CUDA_OR_DIE(
			    st, cudaMemsetAsync(set[i].ptr, 0xff, st->sym_bytes[i], st->stream));
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

/* Enqueue every verified tensor's comparison with expected[] into st->dcmp[slot + i]. */
static void compare_outputs(struct hx_state *st, void *const *expected, int slot)
{
	for (int i = 0; i < st->ntensors; i++)
		if (hx_role_verified(st->sets[0][i].role) &&
		    hx_dev_compare_start(st->sets[0][i].ptr, expected[i], st->layout[i].elems,
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

		if (!hx_role_verified(st->sets[0][i].role))
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

/* The comparisons in slots 0 (the run's end) and CUCO_MAX_TENSORS (drained), over all ranks. */
static void agree_verdicts(struct hx_state *st, struct hx_verdict *end, struct hx_verdict *drained)
{
	struct hx_compare c[2 * CUCO_MAX_TENSORS];
	double v[2 * SUMS] = {0}, mx[2] = {0, 0};

	CUDA_OR_DIE(st,
	            cudaMemcpyAsync(c, st->dcmp, sizeof(c), cudaMemcpyDeviceToHost, st->stream));
	CUDA_OR_DIE(st, cudaStreamSynchronize(st->stream));
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < st->ntensors; i++) {
			const struct hx_compare *x = &c[k * CUCO_MAX_TENSORS + i];
			double *w = v + k * SUMS;

			if (!hx_role_verified(st->sets[0][i].role))
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

int hx_verify(struct hx_state *st, struct hx_program *p, void *state, const char *run_err,
              int fresh, struct hx_verdict *v, char *err, size_t errlen)
{
	void *const *expected = fresh ? st->fresh : st->expected;
	struct hx_verdict drained;
	int code = 0;

	hx_set0_inputs(st, fresh ? hx_fresh_seed(st) : hx_input_seed(st, 0));
	hx_poison_outputs(st, st->sets[0]);
	if (hx_run_once(st, p, state, 0)) {
		snprintf(err, errlen, "run: %s", run_err[0] ? run_err : "launch failed");
		code = CUCO_ERR_RUN;
	} else {
		/* Enqueued right behind the run: it sees what the run's end on this stream saw. */
		compare_outputs(st, expected, 0);
	}
	/* Everything the program started, on any stream. */
	CUDA_OR_DIE(st, cudaDeviceSynchronize());
	if (hx_agree_code(st, code))
		return code ? code : CUCO_ERR_RUN;
	compare_outputs(st, expected, CUCO_MAX_TENSORS);
	agree_verdicts(st, v, &drained);
	if (!v->ok && drained.ok) {
		snprintf(
		    err, errlen,
		    "output was not complete when the run ended on the harness's stream (rel_err "
		    "%.3g, %.0f non-finite, %.0f mismatched) but was once the device had drained: "
		    "the program writes it on a stream it does not join to the harness's",
		    v->rel_err, v->nonfinite, v->mismatched);
		return CUCO_ERR_VERIFY;
	}
	if (v->ok && !same_verdict(v, &drained)) {
		*v = drained;
		snprintf(err, errlen,
		         "output changed after the run had ended on the harness's stream (rel_err "
		         "%.3g, %.0f non-finite, %.0f mismatched once the device had drained): the "
		         "program writes it on a stream it does not join to the harness's",
		         drained.rel_err, drained.nonfinite, drained.mismatched);
		return CUCO_ERR_VERIFY;
	}
	if (!v->ok && v->failed_exact) {
		snprintf(err, errlen,
		         "output differs from the reference: %.0f elements of '%s' not bitwise "
		         "equal (exact compare), %.0f non-finite of %.0f elements",
		         v->failed_mismatched, st->layout[v->failed].name, v->nonfinite,
		         v->checked);
		return CUCO_ERR_VERIFY;
	}
	if (!v->ok) {
		snprintf(err, errlen,
		         "output differs from the reference: rel_err %.3g of '%s' (close compare, "
		         "tolerance %.3g), %.0f non-finite of %.0f elements",
		         v->failed_rel_err, st->layout[v->failed].name, v->failed_tolerance,
		         v->nonfinite, v->checked);
		return CUCO_ERR_VERIFY;
	}
	code = l2_guard(st, err, errlen);
	return hx_agree_code(st, code) ? (code ? code : CUCO_ERR_RUN) : 0;
}
