// mpi_nccl_rmsnorm.cu - a plain MPI + NCCL program of the kind `cuco init
// --from` starts from: each rank normalises its rows (an RMS norm scaled by a
// weight vector that rank 0 broadcasts), then the ranks sum the results with
// ncclAllReduce. docs/your-own-workload.md walks from here to a verified
// cuco workload.
//
//   nvcc -arch=sm_90 mpi_nccl_rmsnorm.cu -o rmsnorm -lnccl -lmpi
//   mpirun -np 2 ./rmsnorm 4096 4096
#include <math.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#define CHECK_NCCL(call)                                                                           \
	do {                                                                                       \
		ncclResult_t r_ = (call);                                                          \
		if (r_ != ncclSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, ncclGetErrorString(r_)); \
			MPI_Abort(MPI_COMM_WORLD, 1);                                              \
		}                                                                                  \
	} while (0)

// One CTA per row: y = x * w / sqrt(mean(x^2) + eps).
__global__ void rmsnorm_rows(const float *x, const float *w, float *y, int width)
{
	__shared__ float part[8];
	const float *xr = x + (size_t)blockIdx.x * width;
	float *yr = y + (size_t)blockIdx.x * width;
	float ss = 0.0f;

	for (int j = threadIdx.x; j < width; j += blockDim.x)
		ss += xr[j] * xr[j];
	for (int o = 16; o > 0; o >>= 1)
		ss += __shfl_xor_sync(0xffffffffu, ss, o);
	if (threadIdx.x % 32 == 0)
		part[threadIdx.x / 32] = ss;
	__syncthreads();
	ss = 0.0f;
	for (int k = 0; k < 8; k++)
		ss += part[k];
	float scale = rsqrtf(ss / width + 1e-5f);
	for (int j = threadIdx.x; j < width; j += blockDim.x)
		yr[j] = xr[j] * w[j] * scale;
}

int main(int argc, char **argv)
{
	int rank, nranks;
	int rows = argc > 1 ? atoi(argv[1]) : 4096, width = argc > 2 ? atoi(argv[2]) : 4096;
	ncclUniqueId id;
	ncclComm_t comm;
	cudaStream_t s;
	float *x, *w, *y, *z, *h;
	size_t n = (size_t)rows * width;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	cudaSetDevice(rank);
	if (rank == 0)
		ncclGetUniqueId(&id);
	MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
	CHECK_NCCL(ncclCommInitRank(&comm, nranks, id, rank));
	cudaStreamCreate(&s);

	cudaMalloc(&x, n * sizeof(float));
	cudaMalloc(&w, width * sizeof(float));
	cudaMalloc(&y, n * sizeof(float));
	cudaMalloc(&z, n * sizeof(float));
	h = (float *)malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++)
		h[i] = (float)((i * 2654435761u + rank) % 2001) / 1000.0f - 1.0f;
	cudaMemcpy(x, h, n * sizeof(float), cudaMemcpyHostToDevice);
	if (rank == 0) {
		for (int j = 0; j < width; j++)
			h[j] = 1.0f + 0.001f * j;
		cudaMemcpy(w, h, width * sizeof(float), cudaMemcpyHostToDevice);
	}
	CHECK_NCCL(ncclBroadcast(w, w, width, ncclFloat32, 0, comm, s));

	rmsnorm_rows<<<rows, 256, 0, s>>>(x, w, y, width);
	CHECK_NCCL(ncclAllReduce(y, z, n, ncclFloat32, ncclSum, comm, s));
	cudaStreamSynchronize(s);

	cudaMemcpy(h, z, sizeof(float), cudaMemcpyDeviceToHost);
	if (rank == 0)
		printf("z[0] = %f\n", h[0]);
	free(h);
	cudaFree(x);
	cudaFree(w);
	cudaFree(y);
	cudaFree(z);
	ncclCommDestroy(comm);
	MPI_Finalize();
	return 0;
}
