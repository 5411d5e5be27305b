// compute_only.cu - @NAME@'s compute alone (timing only: Z is not written).
#include "common.cuh"

PKG_PROGRAM(return pkg_compute(st, t, s))
