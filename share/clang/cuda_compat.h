/*
 * cuda_compat.h - included (-include) after clang's CUDA wrapper when cuco's
 * lift parses a CUDA unit with libclang, so that the parse sees what nvcc
 * sees where clang differs. Never compiled into a program.
 */
#ifndef CUCO_LIFT_CUDA_COMPAT_H
#define CUCO_LIFT_CUDA_COMPAT_H

/* nvcc defines __CUDACC__ as 1; clang's wrapper leaves it empty, which breaks `#if __CUDACC__` */
#undef __CUDACC__
#define __CUDACC__ 1

/*
 * `__NVCC__` in the #if lines of the program's own files is read as this
 * name (src/lift/text.c): defining __NVCC__ itself would send the toolkit's
 * headers down nvcc-only paths.
 */
#define __CUCONV 1

#ifdef __cplusplus
/* nvcc's sm_32 store intrinsics have overloads clang 16 lacks (NCCL's device headers use them) */
template <typename T> __device__ void __stwt(T *ptr, T value);
#endif

#endif
