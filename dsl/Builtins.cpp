//===- Builtins.cpp - Names the .ccl language predefines ------------------===//

#include "dsl/Builtins.h"

#include <algorithm>

namespace cclc::dsl {

const std::vector<BuiltinValue> &builtinValues() {
  static const std::vector<BuiltinValue> Values = {
      {"rank", Type::Int, false, "this rank's logical index, 0 .. nranks-1"},
      {"nranks", Type::Int, true, "number of ranks in the communicator"},
      {"root", Type::Int, true, "root rank of broadcast and reduce"},
      {"channel", Type::Int, false, "index of the channel this instance runs on"},
      {"nchannels", Type::Int, true, "number of channels the algorithm runs on"},
      {"node", Type::Int, false, "index of this rank's node"},
      {"nnodes", Type::Int, true, "number of nodes"},
      {"local_rank", Type::Int, false, "this rank's index within its node"},
      {"local_nranks", Type::Int, true, "ranks per node"},
      {"input", Type::Buffer, false, "the user's send buffer"},
      {"output", Type::Buffer, false, "the user's receive buffer"},
      {"scratch", Type::Buffer, false, "a temporary buffer the size of the larger of input and output"},
      {"ring", Type::Namespace, false, "ring facts of the current channel (needs 'on ring')"},
      {"tree", Type::Namespace, false, "tree facts of the current channel (needs 'on tree')"},
  };
  return Values;
}

const std::vector<BuiltinMember> &builtinMembers() {
  using enum TopologyKind;
  using enum TopologyFact;
  static const std::vector<BuiltinMember> Members = {
      {Ring, Pos, "pos", Type::Int, "position of this rank on the channel's ring"},
      {Ring, Next, "next", Type::Int, "rank after this one on the ring"},
      {Ring, Prev, "prev", Type::Int, "rank before this one on the ring"},
      {Ring, Ranks, "ranks", Type::IntList, "ranks[i] is the rank at ring position i"},
      {Ring, Positions, "positions", Type::IntList, "positions[r] is rank r's ring position"},
      {Tree, Up, "up", Type::Int, "parent in the channel's tree, -1 at the root"},
      {Tree, Down, "down", Type::IntList, "children in the channel's tree"},
      {Tree, NDown, "ndown", Type::Int, "number of children"},
  };
  return Members;
}

const BuiltinMember *lookupMember(TopologyKind Namespace, std::string_view Name) {
  for (const BuiltinMember &M : builtinMembers())
    if (M.Namespace == Namespace && M.Name == Name)
      return &M;
  return nullptr;
}

const std::vector<BuiltinFunction> &builtinFunctions() {
  static const std::vector<BuiltinFunction> Functions = {
      {"log2", {Type::Int}, Type::Int, "floor of the base-2 logarithm of a positive integer"},
      {"pow2", {Type::Int}, Type::Bool, "true when the argument is a power of two"},
      {"min", {Type::Int, Type::Int}, Type::Int, "the smaller argument"},
      {"max", {Type::Int, Type::Int}, Type::Int, "the larger argument"},
  };
  return Functions;
}

const BuiltinFunction *lookupFunction(std::string_view Name) {
  for (const BuiltinFunction &F : builtinFunctions())
    if (F.Name == Name)
      return &F;
  return nullptr;
}

std::string_view paramRoleName(ParamRole Role) {
  switch (Role) {
  case ParamRole::Peer: return "peer";
  case ParamRole::Source: return "source";
  case ParamRole::Destination: return "destination";
  case ParamRole::Accumulator: return "accumulator";
  case ParamRole::Forwarded: return "forwarded";
  }
  return "?";
}

std::string OperationInfo::signature() const {
  std::string S = Name + "(";
  for (size_t I = 0; I < Params.size(); ++I)
    S += (I ? ", " : "") + Params[I].Name;
  return S + ")";
}

OperationCatalog::OperationCatalog() {
  using R = ParamRole;
  // The language's operations are their own effects.
  auto Op = [](std::string Name, std::vector<OperationParam> Params, std::string Doc) {
    return OperationInfo{Name, std::move(Params), std::move(Doc), Name};
  };
  Ops = {
      Op("send", {{"peer", R::Peer}, {"src", R::Source}}, "send src to peer"),
      Op("recv", {{"peer", R::Peer}, {"dst", R::Destination}}, "receive from peer into dst"),
      Op("recv_reduce",
         {{"peer", R::Peer}, {"acc", R::Accumulator}},
         "receive from peer and combine into acc"),
      Op("copy", {{"src", R::Source}, {"dst", R::Destination}}, "copy src to dst locally"),
      Op("reduce", {{"src", R::Source}, {"acc", R::Accumulator}}, "combine src into acc locally"),
      Op("exchange",
         {{"peer", R::Peer}, {"src", R::Source}, {"dst", R::Destination}},
         "send src to peer and receive peer's data into dst"),
      Op("exchange_reduce",
         {{"peer", R::Peer}, {"src", R::Source}, {"acc", R::Accumulator}},
         "send src to peer and combine peer's data into acc"),
      Op("recv_reduce_send",
         {{"from", R::Peer}, {"to", R::Peer}, {"acc", R::Forwarded}},
         "receive from 'from', combine into acc, send acc to 'to'"),
      Op("recv_copy_send",
         {{"from", R::Peer}, {"to", R::Peer}, {"dst", R::Forwarded}},
         "receive from 'from' into dst and send it on to 'to'"),
      Op("recv_reduce_copy",
         {{"peer", R::Peer}, {"src", R::Source}, {"dst", R::Destination}},
         "receive from peer, combine with src and write the result to dst"),
  };
}

bool OperationCatalog::add(OperationInfo Info) {
  if (lookup(Info.Name))
    return false;
  Ops.push_back(std::move(Info));
  return true;
}

const OperationInfo *OperationCatalog::lookup(std::string_view Name) const {
  for (const OperationInfo &Op : Ops)
    if (Op.Name == Name)
      return &Op;
  return nullptr;
}

static size_t editDistance(std::string_view A, std::string_view B) {
  std::vector<size_t> Row(B.size() + 1);
  for (size_t J = 0; J <= B.size(); ++J)
    Row[J] = J;
  for (size_t I = 1; I <= A.size(); ++I) {
    size_t Diag = Row[0];
    Row[0] = I;
    for (size_t J = 1; J <= B.size(); ++J) {
      size_t Up = Row[J];
      Row[J] = std::min({Row[J] + 1, Row[J - 1] + 1, Diag + (A[I - 1] != B[J - 1])});
      Diag = Up;
    }
  }
  return Row[B.size()];
}

std::string closestName(std::string_view Name, const std::vector<std::string_view> &Candidates) {
  std::string_view Best;
  size_t BestDistance = std::max<size_t>(2, Name.size() / 3) + 1;
  for (std::string_view C : Candidates) {
    size_t D = editDistance(Name, C);
    if (D < BestDistance) {
      Best = C;
      BestDistance = D;
    }
  }
  return std::string(Best);
}

} // namespace cclc::dsl
