//===- Frontend.h - Lex, parse and check one .ccl file ----------*- C++ -*-===//
#pragma once

#include "dsl/AST.h"
#include "dsl/Builtins.h"
#include "dsl/Diagnostics.h"

#include <memory>

namespace cclc::dsl {

/// Parses and checks the buffer FileId. Returns the algorithm when it has no
/// errors (warnings allowed), null otherwise; every problem is in Diags.
std::unique_ptr<Algorithm> parseAndCheck(uint32_t FileId, const OperationCatalog &Ops,
                                         DiagnosticEngine &Diags);

} // namespace cclc::dsl
