/*
 * check.h - what the examples use to check an exported program against its
 * workload: inputs from the workload's seeded generator, the expected outputs
 * from its reference (which never communicates), and the error sums that the
 * ranks add up. Not part of the runtime: the runtime never judges.
 */
#ifndef CUCO_EXPORT_CHECK_H
#define CUCO_EXPORT_CHECK_H

#include <stdint.h>

#include "cuco_export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fill x's input tensors from seed with the workload's generator, on stream. 0 or 1 (err). */
int cuco_check_generate(struct cuco_export *x, uint64_t seed, cudaStream_t stream, char *err,
			size_t errlen);

/* Fill every output tensor with NaN bytes (0xff), so an output the program does not write fails. */
int cuco_check_poison(struct cuco_export *x, cudaStream_t stream);

/*
 * Compare x's outputs with the workload's reference for seed (inputs as
 * generated from the same seed): sums[0] += sum of (out - ref)^2, sums[1] +=
 * sum of ref^2, sums[2] += count of non-finite outputs, over every output
 * element of this rank. The relative L2 error over all ranks is
 * sqrt(sum of sums[0] / sum of sums[1]). Synchronises stream. 0 or 1 (err).
 */
int cuco_check_sums(struct cuco_export *x, uint64_t seed, cudaStream_t stream, double sums[3],
		    char *err, size_t errlen);

/* The manifest's tolerance of the relative L2 error. */
double cuco_check_tolerance(void);

#ifdef __cplusplus
}
#endif

#endif
