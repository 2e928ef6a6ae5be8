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
/// Indexed by cclcRedOp_t.
constexpr host::RedOp HostOps[cclcNumOps] = {host::RedOp::Sum, host::RedOp::Prod, host::RedOp::Max,
                                             host::RedOp::Min};
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

} // namespace cclc::runtime
