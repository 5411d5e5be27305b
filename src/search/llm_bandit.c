/* llm_bandit.c - the UCB1 bandit that picks the model of each LLM call (see llm_operator.h). */
#include "search/llm_bandit.h"

#include <math.h>
#include <string.h>

void cuco_bandit_init(struct cuco_bandit *b, int narms)
{
	memset(b, 0, sizeof(*b));
	b->narms = narms < 1 ? 1 : narms > CUCO_LLM_MAX_MODELS ? CUCO_LLM_MAX_MODELS : narms;
}

double cuco_bandit_score(const struct cuco_bandit *b, int arm)
{
	double mean;

	if (arm < 0 || arm >= b->narms)
		return -INFINITY;
	if (b->pulls[arm] == 0)
		return INFINITY;
	mean = b->sum[arm] / (double)b->pulls[arm];
	if (b->max_reward > 0)
		mean /= b->max_reward;
	return mean +
	       sqrt(2.0 * log((double)(b->total > 1 ? b->total : 1)) / (double)b->pulls[arm]);
}

int cuco_bandit_pick(struct cuco_bandit *b, struct cuco_rng *rng)
{
	int best[CUCO_LLM_MAX_MODELS], nbest = 0, arm;
	double top = -INFINITY;

	for (int i = 0; i < b->narms; i++)
		if (b->pulls[i] == 0) {
			arm = i;
			goto out;
		}
	for (int i = 0; i < b->narms; i++) {
		double s = cuco_bandit_score(b, i);
		if (s > top + 1e-12) {
			top = s;
			nbest = 0;
		}
		if (fabs(s - top) <= 1e-12)
			best[nbest++] = i;
	}
	arm = nbest > 1 ? best[cuco_rng_below(rng, (uint64_t)nbest)] : best[0];
out:
	b->pulls[arm]++;
	b->total++;
	return arm;
}

void cuco_bandit_reward(struct cuco_bandit *b, int arm, double gain, double cost)
{
	double r;

	if (arm < 0 || arm >= b->narms)
		return;
	if (!(cost > 0) || !isfinite(cost))
		cost = 1;
	r = isfinite(gain) && gain > 0 ? gain / cost : 0;
	b->sum[arm] += r;
	if (r > b->max_reward)
		b->max_reward = r;
}
