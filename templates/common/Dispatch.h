//===- Dispatch.h - From run-time element types to template types -*- C++ -*-===//
//
// Executors learn the element type and operator of a collective at run time,
// while the primitives are templates over both. These functions make the one
// switch from the runtime's enums to a target's C++ types, so every place
// that needs an instantiation per (type, operator) names the same types: the
// host interpreter and its tests with host::TypeSet, the CUDA interpreter
// kernel with cuda::TypeSet. A TypeSet names the target's half types
// (F16, BF16) and its operator functors (Sum, Prod, Min, Max).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/KernelTypes.h"

#include <cstdint>
#include <stdexcept>

namespace cclc::kern {

/// Returns Fn.template operator()<T>() for the element type T of Type.
template <class Types, class F> decltype(auto) withElementType(DType Type, F &&Fn) {
  switch (Type) {
  case DType::F32: return Fn.template operator()<float>();
  case DType::F64: return Fn.template operator()<double>();
  case DType::F16: return Fn.template operator()<typename Types::F16>();
  case DType::BF16: return Fn.template operator()<typename Types::BF16>();
  case DType::I8: return Fn.template operator()<int8_t>();
  case DType::U8: return Fn.template operator()<uint8_t>();
  case DType::I32: return Fn.template operator()<int32_t>();
  case DType::U32: return Fn.template operator()<uint32_t>();
  case DType::I64: return Fn.template operator()<int64_t>();
  case DType::U64: return Fn.template operator()<uint64_t>();
  }
  // Callers check enums that come from outside before dispatching; a value
  // that still gets here is reported, never run.
  throw std::invalid_argument("an element type outside kern::DType");
}

/// Returns Fn.template operator()<Op>() for the operator functor Op of RedOp.
template <class Types, class F> decltype(auto) withOperator(RedOp Op, F &&Fn) {
  switch (Op) {
  case RedOp::Sum: return Fn.template operator()<typename Types::Sum>();
  case RedOp::Prod: return Fn.template operator()<typename Types::Prod>();
  case RedOp::Min: return Fn.template operator()<typename Types::Min>();
  case RedOp::Max: return Fn.template operator()<typename Types::Max>();
  }
  throw std::invalid_argument("a reduction operator outside kern::RedOp");
}

/// Returns Fn.template operator()<T, Op>() for Type and Op together.
template <class Types, class F>
decltype(auto) withTypeAndOperator(DType Type, RedOp Op, F &&Fn) {
  return withElementType<Types>(Type, [&]<class T>() -> decltype(auto) {
    return withOperator<Types>(Op, [&]<class O>() -> decltype(auto) {
      return Fn.template operator()<T, O>();
    });
  });
}

} // namespace cclc::kern
