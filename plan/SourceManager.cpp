//===- SourceManager.cpp - Source buffers and locations -------------------===//

#include "plan/SourceManager.h"
#include "plan/Assert.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace cclc {

std::optional<uint32_t> SourceManager::loadFile(const std::string &Path, std::string &Error) {
  std::error_code Ec;
  if (std::filesystem::is_directory(Path, Ec)) {
    Error = "'" + Path + "' is a directory, not a file";
    return std::nullopt;
  }
  std::ifstream In(Path, std::ios::binary);
  if (!In) {
    Error = "cannot open '" + Path + "': " +
            (std::filesystem::exists(Path, Ec) ? "permission denied" : "no such file");
    return std::nullopt;
  }
  std::ostringstream Buf;
  Buf << In.rdbuf();
  return addBuffer(Path, Buf.str());
}

uint32_t SourceManager::addBuffer(std::string Name, std::string Text) {
  File F{std::move(Name), std::move(Text), {0}};
  for (size_t I = 0; I < F.Text.size(); ++I)
    if (F.Text[I] == '\n')
      F.LineStarts.push_back(static_cast<uint32_t>(I + 1));
  Files.push_back(std::move(F));
  return static_cast<uint32_t>(Files.size() - 1);
}

std::string_view SourceManager::getText(uint32_t FileId) const {
  CCLC_ASSERT(FileId < Files.size(), "unknown file id");
  return Files[FileId].Text;
}

const std::string &SourceManager::getName(uint32_t FileId) const {
  CCLC_ASSERT(FileId < Files.size(), "unknown file id");
  return Files[FileId].Name;
}

std::string_view SourceManager::getLine(uint32_t FileId, uint32_t Line) const {
  if (FileId >= Files.size() || Line == 0 || Line > Files[FileId].LineStarts.size())
    return {};
  const File &F = Files[FileId];
  size_t Begin = F.LineStarts[Line - 1];
  size_t End = Line < F.LineStarts.size() ? F.LineStarts[Line] - 1 : F.Text.size();
  std::string_view Text = std::string_view(F.Text).substr(Begin, End - Begin);
  if (!Text.empty() && Text.back() == '\r')
    Text.remove_suffix(1);
  return Text;
}

SourceLoc SourceManager::locForOffset(uint32_t FileId, size_t Offset) const {
  CCLC_ASSERT(FileId < Files.size(), "unknown file id");
  const File &F = Files[FileId];
  Offset = std::min(Offset, F.Text.size());
  auto It = std::upper_bound(F.LineStarts.begin(), F.LineStarts.end(), Offset);
  uint32_t Line = static_cast<uint32_t>(It - F.LineStarts.begin());
  return {FileId, Line, static_cast<uint32_t>(Offset - F.LineStarts[Line - 1] + 1)};
}

} // namespace cclc
