//===- HostDevice.h - Functions for both host and device code ----*- C++ -*-===//
//
// The headers of common/ define what host and CUDA kernels share, so that
// both targets compute the same layout and the same results from one
// definition. nvcc compiles their functions for the host and the device;
// every other compiler, and cclc reading the templates, sees plain C++.
//
//===----------------------------------------------------------------------===//
#pragma once

#if defined(__CUDACC__)
#define CCLC_HD __host__ __device__
#else
#define CCLC_HD
#endif

/// Precedes a CCLC_HD template that calls what it is instantiated with: a
/// callable, or a target's conversions, which exist on one side only. nvcc
/// checks the calls of every instantiation for both sides, also for the side
/// that never runs it, and flags host-only callees; this turns that check
/// off for the next template.
#if defined(__NVCC__)
#define CCLC_HD_UNCHECKED _Pragma("nv_exec_check_disable")
#else
#define CCLC_HD_UNCHECKED
#endif
