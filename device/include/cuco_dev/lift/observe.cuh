/*
 * observe.cuh - a lifted program checked against the program itself: built as
 * an executable (CUCO_LIFT_OBSERVE), the program runs natively, one rank on
 * device 0 with a real NCCL communicator of one, and writes its device
 * buffers when the step is reached and after one pass through it; the
 * harness's run of the package's baseline can take those inputs
 * (CUCO_LIFT_INPUTS) and write its outputs (CUCO_LIFT_DUMP), and the two
 * outputs are compared (scripts/lift-check.sh).
 * Part of the lifted program's runtime; include cuco_dev/lift.cuh, not this.
 */
#ifndef CUCO_DEV_LIFT_OBSERVE_CUH
#define CUCO_DEV_LIFT_OBSERVE_CUH

namespace cuco_lift
{

/* dir/r<rank>-<k>.<what>: buffer k's bytes; dir/r<rank>.<what>: one line per buffer. */
static inline int dump_buffer(const char *dir, const char *what, int rank, int k, const void *dev,
                              size_t bytes, const char *name, int dtype)
{
	char path[4096];
	void *host = malloc(bytes ? bytes : 1);
	FILE *f;
	int rc = 0;

	if (!host || ::cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
		free(host);
		return 1;
	}
	snprintf(path, sizeof path, "%s/r%d-%d.%s", dir, rank, k, what);
	f = fopen(path, "wb");
	if (!f || fwrite(host, 1, bytes, f) != bytes)
		rc = 1;
	if (f && fclose(f))
		rc = 1;
	free(host);
	snprintf(path, sizeof path, "%s/r%d.%s", dir, rank, what);
	f = fopen(path, k ? "a" : "w");
	if (!f)
		return 1;
	fprintf(f, "%d %s %d %zu\n", k, name, dtype, bytes);
	return fclose(f) || rc;
}

static inline int load_buffer(const char *dir, const char *what, int rank, int k, void *dev,
                              size_t bytes)
{
	char path[4096];
	void *host = malloc(bytes ? bytes : 1);
	FILE *f;
	int rc = 1;

	snprintf(path, sizeof path, "%s/r%d-%d.%s", dir, rank, k, what);
	f = fopen(path, "rb");
	if (host && f && fread(host, 1, bytes, f) == bytes && fgetc(f) == EOF &&
	    ::cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess)
		rc = 0;
	if (f)
		fclose(f);
	free(host);
	if (rc)
		fprintf(stderr, "cuco lift: %s: missing, or not %zu bytes\n", path, bytes);
	return rc;
}

/* The program's device buffers alive now, in allocation order (as the workload describes). */
static inline int observe_dump(const char *what)
{
	const char *dir = getenv("CUCO_LIFT_OBSERVE_DIR");
	int k = 0;

	::cudaDeviceSynchronize();
	for (int i = 0; dir && i < R.nallocs; i++) {
		const struct alloc *a = &R.allocs[i];
		if (!a->live || !a->user || a->kind == HOST)
			continue;
		if (dump_buffer(dir, what, 0, k++, a->ptr, a->bytes, a->name, a->dtype))
			return 1;
	}
	fprintf(stderr, "cuco lift: %d buffers written (%s) to %s\n", k, what, dir ? dir : "-");
	return 0;
}

/* The top of a pass through the step of a program run natively: at the shape's visit, its
 * buffers as the step finds them. */
static inline void observe_gate(void)
{
	if (++R.visits == R.visit && observe_dump("in"))
		_exit(3);
}

static inline void observe_next(void)
{
	if (R.visits < R.visit)
		return;
	_exit(observe_dump("out") ? 3 : 0);
}

} /* namespace cuco_lift */

/* main of the observing build: the program with the command line given, one rank. */
static inline int cuco_lift_observe(int argc, char **argv, int (*main_fn)(int, char **))
{
	using namespace cuco_lift;
	int dev = 0;
	const char *visit = getenv("CUCO_LIFT_VISIT");

	memset(&R, 0, sizeof R);
	R.mode = OBSERVE;
	R.nranks = 1;
	R.visit = visit ? atoi(visit) : CUCO_LIFT_STEP_VISIT;
	if (R.visit < 1)
		R.visit = 1;
	if (::cudaSetDevice(0) != cudaSuccess ||
	    ::ncclCommInitAll(&R.comm, 1, &dev) != ncclSuccess) {
		fprintf(stderr, "cuco lift: no GPU or NCCL for the observing run\n");
		return 2;
	}
	R.user = RUNNING;
	int rc = main_fn(argc, argv);
	fprintf(stderr, "cuco lift: the program returned %d before the step's pass ended\n", rc);
	return 4;
}

#endif
