//===- Builtins.h - Names the .ccl language predefines ----------*- C++ -*-===//
//
// The values (rank, nranks, buffers), topology facts (ring.*, tree.*),
// expression functions (log2, pow2, min, max) and operations (send, recv, ...)
// that every algorithm can use. Operations live in a catalog rather than in
// the parser so that new primitives can be added without touching the
// language: sema checks each call against the catalog's signature.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dsl/AST.h"

#include <string>
#include <string_view>
#include <vector>

namespace cclc::dsl {

/// A predefined value such as `rank`, `nranks` or `output`.
struct BuiltinValue {
  std::string_view Name;
  Type Ty;
  /// True when the value is a fact about the target rather than about one
  /// rank, so it may appear in `requires` (nranks yes, rank no).
  bool TargetFact;
  std::string_view Doc;
};
const std::vector<BuiltinValue> &builtinValues();

/// The members of the topology namespaces (ring.pos, ..., tree.ndown), so that
/// instantiation tells them apart without comparing names.
enum class TopologyFact { Pos, Next, Prev, Ranks, Positions, Up, Down, NDown };
constexpr size_t NumTopologyFacts = static_cast<size_t>(TopologyFact::NDown) + 1;

/// A member of a topology namespace: `ring.next`, `tree.down`, ...
struct BuiltinMember {
  TopologyKind Namespace;
  TopologyFact Fact;
  std::string_view Name;
  Type Ty;
  std::string_view Doc;
};
const std::vector<BuiltinMember> &builtinMembers();
const BuiltinMember *lookupMember(TopologyKind Namespace, std::string_view Name);

/// A pure function usable inside expressions.
struct BuiltinFunction {
  std::string_view Name;
  std::vector<Type> Params;
  Type Result;
  std::string_view Doc;
};
const std::vector<BuiltinFunction> &builtinFunctions();
const BuiltinFunction *lookupFunction(std::string_view Name);

/// How an operation touches one of its arguments; the verifier and the code
/// generators read the same description.
enum class ParamRole {
  Peer,       ///< An int: the rank communicated with.
  Source,     ///< A slice that is read.
  Destination,///< A slice that is overwritten.
  Accumulator,///< A slice that is combined with the reduction operator.
  Forwarded,  ///< A slice received (reduced or copied) and then sent on.
};
std::string_view paramRoleName(ParamRole Role);

struct OperationParam {
  std::string Name;
  ParamRole Role;
};

struct OperationInfo {
  std::string Name;
  std::vector<OperationParam> Params;
  std::string Doc;
  /// The language operation whose meaning this one has: its own name for the
  /// language's operations, the effect a template-library primitive declares
  /// otherwise. Instantiation and verification go by the effect alone.
  std::string Effect;
  /// Renders "send(peer, src)" for notes and documentation.
  std::string signature() const;
};

/// The set of operations an algorithm may call. Starts with the language's
/// primitives; more can be registered (the template library adds its own).
class OperationCatalog {
public:
  OperationCatalog();
  /// Adds an operation; false when the name is taken.
  bool add(OperationInfo Info);
  const OperationInfo *lookup(std::string_view Name) const;
  const std::vector<OperationInfo> &all() const { return Ops; }

private:
  std::vector<OperationInfo> Ops;
};

/// The closest of Candidates to Name by edit distance, for "did you mean"
/// notes; empty when nothing is close.
std::string closestName(std::string_view Name, const std::vector<std::string_view> &Candidates);

} // namespace cclc::dsl
