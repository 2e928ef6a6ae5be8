//===- Dispatch.h - From run-time element types to template types -*- C++ -*-===//
//
// Executors and their tests learn the element type and operator of a
// collective at run time, while the host primitives are templates over both.
// These functions make the one switch from the runtime's enums to the C++
// types of host/Types.h, so every place that needs an instantiation per
// (type, operator) names the same types.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dsl/Assert.h"
#include "host/Kernel.h"
#include "host/Types.h"

#include <cstdint>

namespace cclc::exec {

/// Returns Fn.template operator()<T>() for the element type T of Type.
template <class F> decltype(auto) withElementType(host::DType Type, F &&Fn) {
  switch (Type) {
  case host::DType::F32: return Fn.template operator()<float>();
  case host::DType::F64: return Fn.template operator()<double>();
  case host::DType::F16: return Fn.template operator()<host::f16>();
  case host::DType::BF16: return Fn.template operator()<host::bf16>();
  case host::DType::I8: return Fn.template operator()<int8_t>();
  case host::DType::U8: return Fn.template operator()<uint8_t>();
  case host::DType::I32: return Fn.template operator()<int32_t>();
  case host::DType::U32: return Fn.template operator()<uint32_t>();
  case host::DType::I64: return Fn.template operator()<int64_t>();
  case host::DType::U64: return Fn.template operator()<uint64_t>();
  }
  CCLC_UNREACHABLE("unknown element type");
}

/// Returns Fn.template operator()<Op>() for the operator functor Op of RedOp.
template <class F> decltype(auto) withOperator(host::RedOp Op, F &&Fn) {
  switch (Op) {
  case host::RedOp::Sum: return Fn.template operator()<host::Sum>();
  case host::RedOp::Prod: return Fn.template operator()<host::Prod>();
  case host::RedOp::Min: return Fn.template operator()<host::Min>();
  case host::RedOp::Max: return Fn.template operator()<host::Max>();
  }
  CCLC_UNREACHABLE("unknown reduction operator");
}

/// Returns Fn.template operator()<T, Op>() for Type and Op together.
template <class F> decltype(auto) withTypeAndOperator(host::DType Type, host::RedOp Op, F &&Fn) {
  return withElementType(Type, [&]<class T>() -> decltype(auto) {
    return withOperator(Op, [&]<class O>() -> decltype(auto) {
      return Fn.template operator()<T, O>();
    });
  });
}

} // namespace cclc::exec
