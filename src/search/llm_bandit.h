/*
 * llm_bandit.h - what one model did in a run, and the bandit that picks the
 * model of the next call (llm_bandit.c). The LLM operator's lowest file.
 */
#ifndef CUCO_SEARCH_LLM_BANDIT_H
#define CUCO_SEARCH_LLM_BANDIT_H

#include <stdint.h>

#include "search/rng.h"

#define CUCO_LLM_MAX_MODELS 8 /* models one operator chooses from */

/* What one model did in a run. */
struct cuco_llm_model_stats {
	int64_t calls;    /* calls sent (mutations and summaries) */
	int64_t tokens;   /* tokens charged (usage, or the estimate) */
	double cost;      /* known cost; calls without a price add nothing */
	int64_t accepted; /* replies that became a candidate */
	int64_t improved; /* candidates fitter than their parent */
};

/*
 * UCB1 over models: reward of a mutation = max(0, child fitness - parent
 * fitness) / its cost (the call's cost when priced, else thousands of
 * tokens), scaled by the largest reward seen so far. Plain data.
 */
struct cuco_bandit {
	int narms;
	int64_t pulls[CUCO_LLM_MAX_MODELS]; /* times chosen (counted when chosen) */
	double sum[CUCO_LLM_MAX_MODELS];    /* of unscaled rewards */
	double max_reward;                  /* largest single reward, for scaling */
	int64_t total;                      /* pulls of all arms */
};

/* An empty bandit over narms (1..CUCO_LLM_MAX_MODELS) arms. */
void cuco_bandit_init(struct cuco_bandit *b, int narms);

/*
 * Choose an arm: the first never pulled, else the best mean/max_reward +
 * sqrt(2 ln total / pulls), ties broken by rng. Counts the pull. Returns
 * the arm index.
 */
int cuco_bandit_pick(struct cuco_bandit *b, struct cuco_rng *rng);

/* Credit arm with gain (clipped at 0) per cost (<= 0 or NaN counts as 1). */
void cuco_bandit_reward(struct cuco_bandit *b, int arm, double gain, double cost);

/* Current UCB1 score of arm (INFINITY when never pulled). */
double cuco_bandit_score(const struct cuco_bandit *b, int arm);

#endif
