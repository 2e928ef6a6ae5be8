//===- Types.cpp - The C API's types, operators and collectives -----------===//

#include "runtime/api/Types.h"
#include "runtime/api/Status.h"

#include <string>

namespace cclc::runtime {

namespace {
/// Indexed by cclcDataType_t.
constexpr host::DType HostTypes[cclcNumTypes] = {
    host::DType::I8,  host::DType::U8,  host::DType::I32, host::DType::U32, host::DType::I64,
    host::DType::U64, host::DType::F16, host::DType::F32, host::DType::F64, host::DType::BF16};
/// Indexed by host::DType.
constexpr std::string_view TypeNames[] = {"f32", "f64", "f16", "bf16", "i8",
                                          "u8",  "i32", "u32", "i64",  "u64"};
/// Indexed by cclcRedOp_t.
constexpr host::RedOp HostOps[cclcNumOps] = {host::RedOp::Sum, host::RedOp::Prod, host::RedOp::Max,
                                             host::RedOp::Min};
/// Indexed by host::RedOp.
constexpr std::string_view OpNames[] = {"sum", "prod", "min", "max"};
} // namespace

host::DType hostType(cclcDataType_t DataType) {
  if (DataType < 0 || DataType >= cclcNumTypes)
    throw ApiError(cclcInvalidArgument,
                   "datatype " + std::to_string(int(DataType)) +
                       " is not a cclcDataType_t; pass one of the values in cclc.h");
  return HostTypes[DataType];
}

host::RedOp hostOp(cclcRedOp_t Op) {
  if (Op < 0 || Op >= cclcNumOps)
    throw ApiError(cclcInvalidArgument, "op " + std::to_string(int(Op)) +
                                            " is not a cclcRedOp_t; pass cclcSum, cclcProd, "
                                            "cclcMax or cclcMin");
  return HostOps[Op];
}

std::string_view typeName(host::DType Type) { return TypeNames[size_t(Type)]; }

std::string_view opName(host::RedOp Op) { return OpNames[size_t(Op)]; }

bool hasRoot(dsl::CollectiveKind Collective) {
  return Collective == dsl::CollectiveKind::Broadcast || Collective == dsl::CollectiveKind::Reduce;
}

bool reduces(dsl::CollectiveKind Collective) {
  return Collective == dsl::CollectiveKind::AllReduce ||
         Collective == dsl::CollectiveKind::ReduceScatter ||
         Collective == dsl::CollectiveKind::Reduce;
}

} // namespace cclc::runtime
