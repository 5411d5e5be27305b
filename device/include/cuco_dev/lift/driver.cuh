/*
 * driver.cuh - what the main the lift writes for a function (src/lift/driver.c)
 * calls: a shape's parameter, an NCCL dtype's size, and a fill of its buffers
 * with small whole numbers, exact in every dtype and in sums over ranks.
 * Part of the lifted program's runtime; include cuco_dev/lift.cuh, not this.
 */
#ifndef CUCO_DEV_LIFT_DRIVER_CUH
#define CUCO_DEV_LIFT_DRIVER_CUH

#include <initializer_list>

/* The shape's parameter `name` (the run's shape), or dflt. */
static inline long long cuco_lift_param(const char *name, long long dflt)
{
	return cuco_lift::R.shape ? cuco_shape_get(cuco_lift::R.shape, name, dflt) : dflt;
}

static inline size_t cuco_lift_nccl_bytes(ncclDataType_t t)
{
	switch (t) {
	case ncclInt8:
	case ncclUint8:
	case ncclFloat8e4m3:
	case ncclFloat8e5m2:
		return 1;
	case ncclFloat16:
	case ncclBfloat16:
		return 2;
	case ncclInt32:
	case ncclUint32:
	case ncclFloat32:
		return 4;
	case ncclInt64:
	case ncclUint64:
	case ncclFloat64:
		return 8;
	default:
		return 1;
	}
}

static inline size_t cuco_lift_max_bytes(std::initializer_list<size_t> v)
{
	size_t m = 0;
	for (size_t x : v)
		m = x > m ? x : m;
	return m;
}

template <typename T> __global__ void cuco_lift_fill_kernel(T *p, size_t n, int rank)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = (T)(float)((long long)((i * 7 + (size_t)rank * 13) % 31) - 15);
}

/* Fill bytes at p with elements of dtype t: (7i + 13 rank) mod 31 - 15. */
static inline void cuco_lift_fill(void *p, size_t bytes, ncclDataType_t t, int rank)
{
	size_t n = bytes / cuco_lift_nccl_bytes(t);
	unsigned blocks = (unsigned)((n + 255) / 256 < 1024 ? (n + 255) / 256 : 1024);

	if (!p || !n)
		return;
	switch (t) {
	case ncclInt8:
		cuco_lift_fill_kernel<<<blocks, 256>>>((signed char *)p, n, rank);
		break;
	case ncclUint8:
		cuco_lift_fill_kernel<<<blocks, 256>>>((unsigned char *)p, n, rank);
		break;
	case ncclFloat16:
		cuco_lift_fill_kernel<<<blocks, 256>>>((__half *)p, n, rank);
		break;
	case ncclBfloat16:
		cuco_lift_fill_kernel<<<blocks, 256>>>((__nv_bfloat16 *)p, n, rank);
		break;
	case ncclInt32:
		cuco_lift_fill_kernel<<<blocks, 256>>>((int *)p, n, rank);
		break;
	case ncclUint32:
		cuco_lift_fill_kernel<<<blocks, 256>>>((unsigned *)p, n, rank);
		break;
	case ncclFloat32:
		cuco_lift_fill_kernel<<<blocks, 256>>>((float *)p, n, rank);
		break;
	case ncclInt64:
		cuco_lift_fill_kernel<<<blocks, 256>>>((long long *)p, n, rank);
		break;
	case ncclUint64:
		cuco_lift_fill_kernel<<<blocks, 256>>>((unsigned long long *)p, n, rank);
		break;
	case ncclFloat64:
		cuco_lift_fill_kernel<<<blocks, 256>>>((double *)p, n, rank);
		break;
	default:
		cuco_lift_fill_kernel<<<blocks, 256>>>((unsigned char *)p, bytes, rank);
		break;
	}
}

#endif
