// random.cuh - deterministic, counter-based random numbers for workload
// inputs: the same (seed, stream, index) gives the same value on any rank,
// any GPU and any launch shape, so a reference can regenerate other ranks'
// inputs instead of receiving them.
#ifndef CUCO_DEV_RANDOM_CUH
#define CUCO_DEV_RANDOM_CUH

#include <cuda_bf16.h>
#include <stdint.h>

namespace cuco
{

// SplitMix64 finaliser: a good 64-bit mix for counters.
__host__ __device__ inline uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

// Uniform in [-1, 1), never exactly representable as all-zero input data.
__host__ __device__ inline float uniform_pm1(uint64_t seed, uint64_t stream, uint64_t i)
{
	uint64_t h = mix64(seed ^ mix64(stream * 0x632be59bd9b4e019ull + i));
	return (float)(h >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

// Fill n bf16 values from (seed, stream).
__global__ void fill_uniform_bf16(__nv_bfloat16 *dst, size_t n, uint64_t seed, uint64_t stream)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = __float2bfloat16(uniform_pm1(seed, stream, i));
}

// Fill n floats from (seed, stream).
__global__ void fill_uniform_f32(float *dst, size_t n, uint64_t seed, uint64_t stream)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = uniform_pm1(seed, stream, i);
}

} // namespace cuco

#endif
