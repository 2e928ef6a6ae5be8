//===- JsonReader.cpp - JSON parsing that remembers positions -------------===//

#include "plan/JsonReader.h"

#include <iterator>
#include <vector>

namespace cclc::plan {

namespace {

using nlohmann::json;

/// A character iterator that publishes how far the parser has read, so the
/// SAX handler can tell where the token it is told about ends.
class CountingIterator {
public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char *;
  using reference = const char &;

  CountingIterator() = default;
  CountingIterator(const char *Begin, const char *Pos, size_t *Read)
      : Begin(Begin), Pos(Pos), Read(Read) {}
  reference operator*() const { return *Pos; }
  CountingIterator &operator++() {
    ++Pos;
    *Read = static_cast<size_t>(Pos - Begin);
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator Old = *this;
    ++*this;
    return Old;
  }
  bool operator==(const CountingIterator &Other) const { return Pos == Other.Pos; }

private:
  const char *Begin = nullptr;
  const char *Pos = nullptr;
  size_t *Read = nullptr;
};

/// Builds the document from SAX events and records each value's start: the
/// first character after the previous token that is not whitespace or a
/// separator.
class LocatingHandler {
public:
  LocatingHandler(std::string_view Text, const size_t &Read, LocatedJson &Out,
                  const SourceManager &SM, DiagnosticEngine &Diags, unsigned MaxDepth)
      : Text(Text), Read(Read), Out(Out), SM(SM), Diags(Diags), MaxDepth(MaxDepth) {}

  bool null() { return add(json(nullptr)); }
  bool boolean(bool V) { return add(json(V)); }
  bool number_integer(json::number_integer_t V) { return add(json(V)); }
  bool number_unsigned(json::number_unsigned_t V) { return add(json(V)); }
  bool number_float(json::number_float_t V, const json::string_t &) { return add(json(V)); }
  bool string(json::string_t &V) { return add(json(std::move(V))); }
  bool binary(json::binary_t &V) { return add(json(json::binary_t(std::move(V)))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t &K) {
    PendingKey = std::move(K);
    LastEnd = Read;
    return true;
  }

  bool parse_error(std::size_t Position, const std::string &, const nlohmann::detail::exception &E) {
    // nlohmann counts characters read; the offending one is the last of them.
    SourceLoc Loc = SM.locForOffset(Out.FileId, Position == 0 ? 0 : Position - 1);
    std::string Msg = E.what();
    // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..."
    size_t Column = Msg.find("column ");
    size_t Colon = Msg.find(": ", Column == std::string::npos ? 0 : Column);
    if (Colon != std::string::npos)
      Msg = Msg.substr(Colon + 2);
    Diags.error(Loc, "invalid JSON: " + Msg);
    return false;
  }

private:
  size_t valueStart() const {
    size_t I = LastEnd;
    while (I < Text.size() && (Text[I] == ' ' || Text[I] == '\t' || Text[I] == '\n' ||
                               Text[I] == '\r' || Text[I] == ',' || Text[I] == ':'))
      ++I;
    return I;
  }

  /// A value placed in the document: where it lives and its index in
  /// Out.Starts.
  struct Placed {
    json *Value;
    uint32_t Index;
  };

  /// Places V under its parent.
  Placed place(json V) {
    size_t Start = valueStart();
    LastEnd = Read;
    uint32_t Index = static_cast<uint32_t>(Out.Starts.size());
    Out.Starts.push_back(Start);
    if (Stack.empty()) {
      Out.Value = std::move(V);
      return {&Out.Value, Index};
    }
    auto [Parent, ParentIndex] = Stack.back();
    json *Slot;
    std::string Key = std::to_string(ParentIndex) + "/";
    if (Parent->is_array()) {
      Key += std::to_string(Parent->size());
      Parent->push_back(std::move(V));
      Slot = &Parent->back();
    } else {
      Key += PendingKey;
      Slot = &(*Parent)[PendingKey];
      *Slot = std::move(V);
    }
    Out.Children[std::move(Key)] = Index;
    return {Slot, Index};
  }

  bool add(json V) {
    place(std::move(V));
    return true;
  }
  bool open(json V) {
    if (Stack.size() >= MaxDepth) {
      Diags.error(SM.locForOffset(Out.FileId, valueStart()),
                  "invalid JSON: arrays and objects nest more than " + std::to_string(MaxDepth) +
                      " deep here");
      return false;
    }
    Stack.push_back(place(std::move(V)));
    return true;
  }
  bool close() {
    Stack.pop_back();
    LastEnd = Read;
    return true;
  }

  std::string_view Text;
  const size_t &Read;
  LocatedJson &Out;
  const SourceManager &SM;
  DiagnosticEngine &Diags;
  unsigned MaxDepth;
  std::vector<Placed> Stack;
  std::string PendingKey;
  size_t LastEnd = 0;
};

} // namespace

std::string appendPointer(const std::string &Pointer, const std::string &Token) {
  std::string Result = Pointer + "/";
  for (char C : Token) {
    if (C == '~')
      Result += "~0";
    else if (C == '/')
      Result += "~1";
    else
      Result += C;
  }
  return Result;
}

SourceLoc LocatedJson::locate(const SourceManager &SM, const std::string &Pointer) const {
  if (Starts.empty())
    return SM.locForOffset(FileId, 0);
  uint32_t Index = 0;
  // Each "/token" of the pointer, unescaped, names a child of Index.
  for (size_t Pos = 0; Pos < Pointer.size() && Pointer[Pos] == '/';) {
    size_t End = Pointer.find('/', Pos + 1);
    if (End == std::string::npos)
      End = Pointer.size();
    std::string Key = std::to_string(Index) + "/";
    for (size_t I = Pos + 1; I < End; ++I) {
      if (Pointer[I] == '~' && I + 1 < End && (Pointer[I + 1] == '0' || Pointer[I + 1] == '1')) {
        Key += Pointer[++I] == '0' ? '~' : '/';
        continue;
      }
      Key += Pointer[I];
    }
    auto It = Children.find(Key);
    if (It == Children.end())
      break;
    Index = It->second;
    Pos = End;
  }
  return SM.locForOffset(FileId, Starts[Index]);
}

std::optional<LocatedJson> parseJsonFile(uint32_t FileId, const SourceManager &SM,
                                         DiagnosticEngine &Diags, unsigned MaxDepth) {
  LocatedJson Out;
  Out.FileId = FileId;
  std::string_view Text = SM.getText(FileId);
  size_t Read = 0;
  LocatingHandler Handler(Text, Read, Out, SM, Diags, MaxDepth);
  CountingIterator First(Text.data(), Text.data(), &Read);
  CountingIterator Last(Text.data(), Text.data() + Text.size(), &Read);
  if (!json::sax_parse(First, Last, &Handler))
    return std::nullopt;
  return Out;
}

} // namespace cclc::plan
