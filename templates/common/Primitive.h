//===- Primitive.h - Marks the primitives of the template library -*- C++ -*-===//
//
// cclc learns which primitives exist by reading the template library with
// Clang libTooling. A primitive is a function template marked with
// CCLC_PRIMITIVE(Name, Effect): Name is what an algorithm calls in a .ccl
// file, Effect is the language operation whose meaning it has (one of send,
// recv, recv_reduce, copy, reduce, exchange, exchange_reduce,
// recv_reduce_send, recv_copy_send), which the verifier proves and the
// executors follow. The annotation exists only while cclc reads the library
// (CCLC_CATALOG is defined then); compilers see plain functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#if defined(CCLC_CATALOG) && defined(__clang__)
#define CCLC_PRIMITIVE(Name, Effect) [[clang::annotate("cclc.primitive", Name, Effect)]]
#else
#define CCLC_PRIMITIVE(Name, Effect)
#endif
