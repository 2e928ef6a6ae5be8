//===- MscclXml.h - MSCCL-IR XML export and import --------------*- C++ -*-===//
//
// MSCCL's runtime executes algorithms written as XML:
//
//   <algo name proto nchannels nchunksperloop ngpus coll inplace outofplace
//         minBytes maxBytes>
//     <gpu id i_chunks o_chunks s_chunks>
//       <tb id send recv chan>
//         <step s type srcbuf srcoff dstbuf dstoff cnt depid deps hasdep/>
//
// A threadblock (tb) runs its steps in order and talks to at most one send
// peer and one receive peer; MSCCL needs each (channel, peer) connection in
// one tb. Steps in different tbs are ordered only by explicit dependencies
// (depid/deps name another tb's step; extra dependencies ride on preceding
// nop steps).
//
// Export puts each rank's channel program into tbs (one per send peer, one
// per receive peer, fused steps joining the two, one for local copies) and
// expresses program order as dependencies between tbs; steps marked WithNext
// get no dependency on each other, so an exchange's send and receive run
// concurrently. Offsets and counts are our chunk grid: nchunksperloop is the
// larger of the input and output grids, as MSCCL's runtime sizes chunks.
// What MSCCL-IR has no words for (root, topology, remap, buffer slots, the
// .ccl source and line of each step) rides along in a <cclc> element and
// extra step attributes, which MSCCL's parser ignores.
//
// MscclImport.h reads the format back.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/PlanJson.h"
#include "plan/Schedule.h"

#include <iosfwd>
#include <string_view>

namespace cclc::emit {

/// Writes S; false, after a diagnostic, when S needs something MSCCL-IR
/// cannot say (a channel whose fused steps tie one connection to two tbs).
bool writeMscclXml(const sched::Schedule &S, const plan::PlanInfo &Info, std::ostream &OS,
                   DiagnosticEngine &Diags);

/// MSCCL's spelling of a collective ("reducescatter").
std::string_view mscclCollectiveName(plan::CollectiveKind Kind);

} // namespace cclc::emit
