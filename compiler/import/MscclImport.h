//===- MscclImport.h - MSCCL-IR XML into a schedule -------------*- C++ -*-===//
//
// Reads any MSCCL-IR file (ours, see MscclXml.h, or hand-written, from
// msccl-tools or TACCL) so that MSCCL algorithms run on cclc's runtime.
// Every element is checked; errors name the element and point at its line.
//
// MSCCL runs a gpu's threadblocks concurrently, ordered only by their own
// step order and explicit dependencies; a cclc channel is one sequence. Each
// (gpu, channel) is linearized by simulating the algorithm across all gpus:
// a step runs once its tb predecessor and its dependencies have run and, for
// a receive, once the message is there. Among steps ready together, sends go
// first; a send followed by a recv or recv_reduce it does not depend on
// becomes an exchange (WithNext), which is how the export writes one, and the
// only group the primitives run together. So exporting and importing gives
// back the identical schedule.
//
// Differences MSCCL-IR allows and cclc does not are reported, not guessed:
// in-place-only algorithms, dependencies across channels, chunk counts that
// do not fit the collective's grid. rrc/rrcs with a source other than the
// destination become a copy followed by the in-place form; rrs, which MSCCL
// sends without storing, stores its sum in the source slice (the verifier
// re-checks that this is harmless).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/PlanJson.h"

#include <optional>

namespace cclc::importer {

/// Reads MSCCL-IR file FileId. Info gets minBytes/maxBytes and, for files
/// cclc wrote, the .ccl source that step lines refer to.
std::optional<plan::Plan> readMscclXml(uint32_t FileId, SourceManager &SM, DiagnosticEngine &Diags);

} // namespace cclc::importer
