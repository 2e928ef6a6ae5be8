//===- Library.cpp - The algorithm library a command compares -------------===//

#include "Library.h"

#include <algorithm>

namespace cclc::driver {

std::vector<LibraryAlgorithm> libraryAlgorithms(const std::string &Dir,
                                                plan::CollectiveKind Collective,
                                                SourceManager &SM,
                                                const dsl::OperationCatalog &Ops) {
  std::vector<std::filesystem::path> Files;
  std::error_code Error;
  for (const auto &Entry : std::filesystem::directory_iterator(Dir, Error))
    if (Entry.path().extension() == ".ccl")
      Files.push_back(Entry.path());
  std::sort(Files.begin(), Files.end());
  DiagnosticEngine Quiet(SM);
  Quiet.setSilent(true);
  std::vector<LibraryAlgorithm> Library;
  for (const std::filesystem::path &File : Files) {
    std::string LoadError;
    std::optional<uint32_t> Id = SM.loadFile(File.string(), LoadError);
    std::unique_ptr<dsl::Algorithm> Algo = Id ? dsl::parseAndCheck(*Id, Ops, Quiet) : nullptr;
    if (Algo && Algo->Collective == Collective)
      Library.push_back({File, *Id, std::move(Algo)});
  }
  return Library;
}

} // namespace cclc::driver
