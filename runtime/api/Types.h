//===- Types.h - The C API's types, operators and collectives ---*- C++ -*-===//
//
// The C API numbers types as NCCL does; executors and kernel tables use the
// template library's enumerations. Conversions check their argument, so a
// bad value from C is an InvalidArgument error naming it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/api/cclc.h"

#include "plan/Vocabulary.h"
#include "host/Kernel.h"

#include <cstddef>

namespace cclc::runtime {

/// The template library's type for DataType; throws on a bad value.
host::DType hostType(cclcDataType_t DataType);
/// The template library's operator for Op; throws on a bad value.
host::RedOp hostOp(cclcRedOp_t Op);


} // namespace cclc::runtime
