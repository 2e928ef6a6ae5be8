//===- Types.h - The C API's types, operators and collectives ---*- C++ -*-===//
//
// The C API numbers types as NCCL does; executors and kernel tables use the
// template library's enumerations. Conversions check their argument, so a
// bad value from C is an InvalidArgument error naming it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/api/cclc.h"

#include "dsl/AST.h"
#include "host/Kernel.h"

#include <cstddef>
#include <string_view>

namespace cclc::runtime {

/// The template library's type for DataType; throws on a bad value.
host::DType hostType(cclcDataType_t DataType);
/// The template library's operator for Op; throws on a bad value.
host::RedOp hostOp(cclcRedOp_t Op);

/// "f32", "bf16", ...: the names `cclc compile --dtypes` takes.
std::string_view typeName(host::DType Type);
/// "sum", "prod", "min", "max".
std::string_view opName(host::RedOp Op);

/// True for the collectives that have a root (broadcast, reduce).
bool hasRoot(dsl::CollectiveKind Collective);
/// True for the collectives that reduce.
bool reduces(dsl::CollectiveKind Collective);

} // namespace cclc::runtime
