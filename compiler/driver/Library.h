//===- Library.h - The algorithm library a command compares -----*- C++ -*-===//
//
// `compile --explain` predicts the library's algorithms of a collective
// beside the one it compiles, and `tune` measures them: both start from the
// same list of the library's .ccl files that implement the collective.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dsl/Frontend.h"
#include "plan/Diagnostics.h"
#include "plan/Vocabulary.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace cclc::driver {

struct LibraryAlgorithm {
  std::filesystem::path File;
  uint32_t FileId = 0;
  std::unique_ptr<dsl::Algorithm> Algo;
};

/// The algorithms of Dir's .ccl files, in file name order, that check and
/// implement Collective; files that do not check are left out silently (a
/// library may hold algorithms for other targets). Ops must outlive them.
std::vector<LibraryAlgorithm> libraryAlgorithms(const std::string &Dir,
                                                plan::CollectiveKind Collective,
                                                SourceManager &SM,
                                                const dsl::OperationCatalog &Ops);

} // namespace cclc::driver
