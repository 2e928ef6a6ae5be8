//===- Frontend.h - Lex, parse and check one .ccl file ----------*- C++ -*-===//
#pragma once

#include "dsl/AST.h"
#include "dsl/Builtins.h"
#include "plan/Diagnostics.h"

#include <memory>
#include <string>
#include <vector>

namespace cclc::dsl {

/// Parses and checks the buffer FileId. Returns the algorithm when it has no
/// errors (warnings allowed), null otherwise; every problem is in Diags.
std::unique_ptr<Algorithm> parseAndCheck(uint32_t FileId, const OperationCatalog &Ops,
                                         DiagnosticEngine &Diags);

/// Parses FileId without checking it; null after a syntax error. Callers that
/// extend the operation catalog from what an algorithm calls parse first,
/// then check with dsl::Sema.
std::unique_ptr<Algorithm> parse(uint32_t FileId, DiagnosticEngine &Diags);

/// The operations Algo calls that Ops does not know, each once, in the order
/// of their first call.
std::vector<std::string> unknownOperations(const Algorithm &Algo, const OperationCatalog &Ops);

} // namespace cclc::dsl
