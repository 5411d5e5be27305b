// mpi_example.cu - an exported cuco program in an MPI + NCCL application:
// one rank per GPU, the application's own communicator and stream; the
// program runs a few times and its outputs are checked against the
// workload's reference (relative L2 error over all ranks, as cuco's harness).
//
//   mpirun -np N ./mpi_example [SHAPE] [SEED]     (SHAPE: a name or P=V,...)
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include "check.h"
#include "cuco_export.h"
#include "shapes.h"

#define DIE(...)                                                                                   \
	do {                                                                                       \
		fprintf(stderr, "mpi_example rank %d: ", rank);                                    \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fprintf(stderr, "\n");                                                             \
		MPI_Abort(MPI_COMM_WORLD, 1);                                                      \
	} while (0)

int main(int argc, char **argv)
{
	int rank, nranks, ndev = 0;
	const char *shape = argc > 1 ? argv[1] : CUCO_EXPORT_DEFAULT_SHAPE;
	unsigned long long seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	ncclUniqueId id;
	ncclComm_t comm;
	cudaStream_t stream;
	struct cuco_export *x;
	char err[1024];
	double sums[3] = {0, 0, 0}, all[3];
	float ms = 0;
	cudaEvent_t e0, e1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
		DIE("no CUDA device");
	cudaSetDevice((lr ? atoi(lr) : rank) % ndev);
	if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess)
		DIE("ncclGetUniqueId failed");
	MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
	if (ncclCommInitRank(&comm, nranks, id, rank) != ncclSuccess)
		DIE("ncclCommInitRank failed");
	cudaStreamCreate(&stream);

	if (cuco_export_init(comm, shape, &x, err, sizeof(err)))
		DIE("%s", err);
	if (cuco_check_generate(x, seed, stream, err, sizeof(err)))
		DIE("%s", err);
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	// A few runs (the application's loop), then a checked one on poisoned outputs.
	for (int i = 0; i < 5; i++)
		if (cuco_export_run(x, stream))
			DIE("%s", cuco_export_error(x));
	cuco_check_poison(x, stream);
	cudaEventRecord(e0, stream);
	if (cuco_export_run(x, stream))
		DIE("%s", cuco_export_error(x));
	cudaEventRecord(e1, stream);
	if (cudaStreamSynchronize(stream) != cudaSuccess)
		DIE("run: %s", cudaGetErrorString(cudaGetLastError()));
	cudaEventElapsedTime(&ms, e0, e1);
	if (cuco_check_sums(x, seed, stream, sums, err, sizeof(err)))
		DIE("%s", err);
	MPI_Allreduce(sums, all, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	double rel = all[1] > 0 ? sqrt(all[0] / all[1]) : sqrt(all[0]);
	int ok = all[2] == 0 && rel <= cuco_check_tolerance();
	if (rank == 0)
		printf("%s %s shape %s ranks %d: rel_err %.3e (tolerance %g), non-finite %.0f, one run "
		       "%.1f us: %s\n",
		       CUCO_EXPORT_WORKLOAD, CUCO_EXPORT_PROGRAM, shape, nranks, rel,
		       cuco_check_tolerance(), all[2], ms * 1000.0, ok ? "verified" : "WRONG");
	cuco_export_fini(x);
	ncclCommDestroy(comm);
	MPI_Finalize();
	return ok ? 0 : 1;
}
