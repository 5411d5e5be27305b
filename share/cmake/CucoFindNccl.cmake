# CucoFindNccl.cmake - where NCCL (and NVSHMEM) are, found the same way by cuco's own build
# and by the CMake project `cuco export` writes (it copies this file into cmake/).
#
# cuco_find_nccl() sets NCCL_INCLUDE_DIR (the folder holding nccl.h and nccl_device.h) and
# NCCL_LIBRARY, looking in this order:
#   1. NCCL_HOME (a CMake variable, else the environment variable): include/, lib/, lib64/
#   2. the CUDA toolkit's own copy (CUDAToolkit_INCLUDE_DIRS, CUDAToolkit_LIBRARY_DIR)
#   3. the nvidia-nccl-cu13 Python wheel (site-packages/nvidia/nccl; its library is libnccl.so.2)
#   4. the system's (libnccl-dev)
# The device API (nccl_device.h) needs NCCL 2.28 or newer; a copy without it is not taken.
#
# cuco_find_nvshmem() sets CUCO_NVSHMEM_HOME and CUCO_NVSHMEM_VERSION (both empty when not
# found): NVSHMEM_HOME, scripts/setup-nvshmem.sh's cache (~/.cache/cuco-nvshmem), or the
# nvidia-nvshmem-cu13 wheel; a copy is taken only with lib/libnvshmem_device.a.
#
# Both need find_package(CUDAToolkit) first.

# The first site-packages folder of python3, or "" (no python3).
function(_cuco_python_site out)
  execute_process(COMMAND python3 -c "import site; print(site.getsitepackages()[0])"
    OUTPUT_VARIABLE site OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    set(site "")
  endif()
  set(${out} "${site}" PARENT_SCOPE)
endfunction()

macro(cuco_find_nccl)
  set(NCCL_HOME "$ENV{NCCL_HOME}" CACHE PATH "NCCL 2.28 or newer (include/, lib/)")
  _cuco_python_site(_cuco_site)
  set(_cuco_nccl_inc_hints)
  set(_cuco_nccl_lib_hints)
  if(NCCL_HOME)
    list(APPEND _cuco_nccl_inc_hints ${NCCL_HOME}/include)
    list(APPEND _cuco_nccl_lib_hints ${NCCL_HOME}/lib ${NCCL_HOME}/lib64)
  endif()
  list(APPEND _cuco_nccl_inc_hints ${CUDAToolkit_INCLUDE_DIRS})
  list(APPEND _cuco_nccl_lib_hints ${CUDAToolkit_LIBRARY_DIR})
  if(_cuco_site)
    list(APPEND _cuco_nccl_inc_hints ${_cuco_site}/nvidia/nccl/include)
    list(APPEND _cuco_nccl_lib_hints ${_cuco_site}/nvidia/nccl/lib)
  endif()
  find_path(NCCL_INCLUDE_DIR nccl_device.h HINTS ${_cuco_nccl_inc_hints}
    DOC "folder holding nccl.h and nccl_device.h (NCCL 2.28 or newer)")
  if(NOT NCCL_INCLUDE_DIR)
    message(FATAL_ERROR "NCCL 2.28 or newer not found (no nccl_device.h in NCCL_HOME, the "
      "nvidia-nccl-cu13 wheel, the CUDA toolkit or the system): pip install nvidia-nccl-cu13, "
      "or apt-get install libnccl-dev, or -DNCCL_HOME=/path/to/nccl")
  endif()
  # the library beside the headers first: the device API's structs are shared between the two
  get_filename_component(_cuco_nccl_root ${NCCL_INCLUDE_DIR} DIRECTORY)
  find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2
    HINTS ${_cuco_nccl_root}/lib ${_cuco_nccl_root}/lib64 ${_cuco_nccl_lib_hints}
    DOC "libnccl of the same NCCL as NCCL_INCLUDE_DIR")
  if(NOT NCCL_LIBRARY)
    message(FATAL_ERROR "NCCL's headers are in ${NCCL_INCLUDE_DIR} but no libnccl was found "
      "beside them or in NCCL_HOME: -DNCCL_HOME=/path/to/nccl")
  endif()
  message(STATUS "NCCL: ${NCCL_INCLUDE_DIR}, ${NCCL_LIBRARY}")
endmacro()

macro(cuco_find_nvshmem)
  set(NVSHMEM_HOME "$ENV{NVSHMEM_HOME}" CACHE PATH "NVSHMEM installation (include/, lib/)")
  _cuco_python_site(_cuco_site)
  find_path(NVSHMEM_INCLUDE_DIR non_abi/nvshmem_version.h NO_DEFAULT_PATH HINTS
    ${NVSHMEM_HOME}/include $ENV{HOME}/.cache/cuco-nvshmem/nvidia/nvshmem/include
    ${_cuco_site}/nvidia/nvshmem/include)
  set(CUCO_NVSHMEM_HOME "")
  set(CUCO_NVSHMEM_VERSION "")
  if(NVSHMEM_INCLUDE_DIR)
    get_filename_component(_cuco_nvshmem_root ${NVSHMEM_INCLUDE_DIR} DIRECTORY)
    file(STRINGS ${NVSHMEM_INCLUDE_DIR}/non_abi/nvshmem_version.h _cuco_nvshmem_vlines
      REGEX "define NVSHMEM_VENDOR_(MAJOR|MINOR|PATCH)_VERSION")
    set(_cuco_nvshmem_v "")
    foreach(_cuco_part MAJOR MINOR PATCH)
      string(REGEX MATCH "NVSHMEM_VENDOR_${_cuco_part}_VERSION ([0-9]+)" _cuco_m
        "${_cuco_nvshmem_vlines}")
      list(APPEND _cuco_nvshmem_v ${CMAKE_MATCH_1})
    endforeach()
    if(EXISTS ${_cuco_nvshmem_root}/lib/libnvshmem_device.a)
      set(CUCO_NVSHMEM_HOME ${_cuco_nvshmem_root})
      string(REPLACE ";" "." CUCO_NVSHMEM_VERSION "${_cuco_nvshmem_v}")
      message(STATUS "NVSHMEM ${CUCO_NVSHMEM_VERSION}: ${CUCO_NVSHMEM_HOME}")
    else()
      message(STATUS "NVSHMEM: ${_cuco_nvshmem_root} has no lib/libnvshmem_device.a; NVSHMEM not found")
    endif()
  else()
    message(STATUS "NVSHMEM not found (NVSHMEM_HOME, scripts/setup-nvshmem.sh): the nvshmem backend is off")
  endif()
endmacro()
