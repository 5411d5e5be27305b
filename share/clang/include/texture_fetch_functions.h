/*
 * texture_fetch_functions.h - empty: clang's CUDA wrapper includes this
 * header, which CUDA 13 no longer ships. cuco's lift puts this folder on
 * the include path only when the toolkit lacks the header.
 */
