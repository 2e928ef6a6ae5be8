//===- ScheduleDot.h - The schedule as a Graphviz graph ---------*- C++ -*-===//
//
// `cclc compile --emit=dot`: for people who would rather look. Each rank is a
// cluster, each step a node (program order runs top to bottom along dashed
// edges, one column per channel), and each message a solid edge from the send
// to the receive that takes it, labelled with the slice it carries.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "plan/Schedule.h"

#include <iosfwd>

namespace cclc::emit {

void printScheduleDot(const sched::Schedule &S, std::ostream &OS);

} // namespace cclc::emit
