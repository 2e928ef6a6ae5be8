//===- PlanJson.cpp - The plan file the runtime loads ---------------------===//

#include "plan/PlanJson.h"
#include "plan/Assert.h"
#include "plan/Limits.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <limits>
#include <span>

namespace cclc::plan {

using nlohmann::json;
using sched::BufferKind;
using sched::OpKind;
using sched::Slice;
using sched::Step;

namespace {

/// Which fields a step of each operation carries; the writer writes exactly
/// these and the reader insists on exactly these.
struct OpFields {
  bool Peer, SendPeer, Src, Dst;
};

OpFields fieldsOf(OpKind Op) {
  switch (Op) {
  case OpKind::Send: return {true, false, true, false};
  case OpKind::Recv:
  case OpKind::RecvReduce: return {true, false, false, true};
  case OpKind::Copy:
  case OpKind::Reduce: return {false, false, true, true};
  case OpKind::RecvReduceSend:
  case OpKind::RecvCopySend: return {true, true, false, true};
  case OpKind::RecvReduceCopy: return {true, false, true, true};
  case OpKind::Exchange:
  case OpKind::ExchangeReduce: break;
  }
  CCLC_UNREACHABLE("a schedule step is never an exchange");
}

/// A primitive is named by a C++ identifier of the template library.
bool isPrimitiveName(std::string_view Name) {
  auto IdentifierChar = [](char C) {
    return std::isalnum(static_cast<unsigned char>(C)) || C == '_';
  };
  return !Name.empty() && !std::isdigit(static_cast<unsigned char>(Name[0])) &&
         std::all_of(Name.begin(), Name.end(), IdentifierChar);
}

constexpr BufferKind AllBuffers[] = {BufferKind::Input, BufferKind::Output, BufferKind::Scratch};
constexpr TopologyKind AllTopologies[] = {TopologyKind::None, TopologyKind::Ring,
                                         TopologyKind::Tree};

json sliceToJson(const Slice &S) {
  return {{"buffer", std::string(sched::bufferName(S.Buffer))}, {"chunk", S.Chunk},
          {"count", S.Count}};
}

/// How each numeric field moves from one step of a rolled run to the next.
struct Stride {
  int64_t Peer = 0, SendPeer = 0, Src = 0, Dst = 0;
  bool operator==(const Stride &) const = default;
};

/// A step as a plan writes it: Base, then Repeat - 1 more steps, each moved
/// by Move from the one before.
struct RolledStep {
  Step Base;
  int64_t Repeat = 1;
  Stride Move;

  /// The I-th step of the run.
  Step at(int64_t I) const {
    Step St = Base;
    St.Peer = int32_t(St.Peer + I * Move.Peer);
    St.SendPeer = int32_t(St.SendPeer + I * Move.SendPeer);
    St.Src.Chunk = int32_t(St.Src.Chunk + I * Move.Src);
    St.Dst.Chunk = int32_t(St.Dst.Chunk + I * Move.Dst);
    return St;
  }
};

/// The stride from A to B when B can follow A in a rolled run: the same
/// operation, buffers, sizes, primitive and statement, neither running with
/// the next step (an exchange is a pair, not a run).
std::optional<Stride> strideBetween(const Step &A, const Step &B) {
  OpFields F = fieldsOf(A.Op);
  if (A.Op != B.Op || A.WithNext || B.WithNext || A.Primitive != B.Primitive ||
      A.Proto != B.Proto ||
      A.Loc.FileId != B.Loc.FileId || A.Loc.Line != B.Loc.Line || A.Loc.Col != B.Loc.Col ||
      (F.Src && (A.Src.Buffer != B.Src.Buffer || A.Src.Count != B.Src.Count)) ||
      (F.Dst && (A.Dst.Buffer != B.Dst.Buffer || A.Dst.Count != B.Dst.Count)))
    return std::nullopt;
  Stride D;
  D.Peer = F.Peer ? int64_t(B.Peer) - A.Peer : 0;
  D.SendPeer = F.SendPeer ? int64_t(B.SendPeer) - A.SendPeer : 0;
  D.Src = F.Src ? int64_t(B.Src.Chunk) - A.Src.Chunk : 0;
  D.Dst = F.Dst ? int64_t(B.Dst.Chunk) - A.Dst.Chunk : 0;
  return D;
}

/// Steps as the fewest rolled runs, taken greedily from the front.
std::vector<RolledStep> roll(const std::vector<Step> &Steps) {
  std::vector<RolledStep> Runs;
  for (size_t I = 0; I < Steps.size();) {
    RolledStep Run{Steps[I], 1, {}};
    if (I + 1 < Steps.size()) {
      if (std::optional<Stride> D = strideBetween(Steps[I], Steps[I + 1])) {
        Run.Move = *D;
        while (I + Run.Repeat < Steps.size() &&
               strideBetween(Steps[I + Run.Repeat - 1], Steps[I + Run.Repeat]) == *D)
          ++Run.Repeat;
      }
    }
    if (Run.Repeat == 1)
      Run.Move = {};
    I += size_t(Run.Repeat);
    Runs.push_back(std::move(Run));
  }
  return Runs;
}

json stepToJson(const Step &St) {
  json J;
  J["op"] = std::string(sched::opName(St.Op));
  OpFields F = fieldsOf(St.Op);
  if (F.Peer)
    J["peer"] = St.Peer;
  if (F.SendPeer)
    J["send_peer"] = St.SendPeer;
  if (F.Src)
    J["src"] = sliceToJson(St.Src);
  if (F.Dst)
    J["dst"] = sliceToJson(St.Dst);
  if (St.WithNext)
    J["with_next"] = true;
  if (!St.Primitive.empty())
    J["primitive"] = St.Primitive;
  if (St.Proto != sched::Protocol::Simple)
    J["protocol"] = std::string(plan::protocolName(St.Proto));
  if (St.Loc.isValid()) {
    J["line"] = St.Loc.Line;
    J["col"] = St.Loc.Col;
  }
  return J;
}

json rolledToJson(const RolledStep &Run) {
  json J = stepToJson(Run.Base);
  if (Run.Repeat == 1)
    return J;
  J["repeat"] = Run.Repeat;
  json Move = json::object();
  for (auto [Name, Delta] : {std::pair{"peer", Run.Move.Peer}, {"send_peer", Run.Move.SendPeer},
                             {"src", Run.Move.Src}, {"dst", Run.Move.Dst}})
    if (Delta != 0)
      Move[Name] = Delta;
  if (!Move.empty())
    J["stride"] = std::move(Move);
  return J;
}

/// A field's path twice over: as users read it ("ranks[3].peer") and as a
/// JSON pointer ("/ranks/3/peer") to find its position.
struct FieldPath {
  std::string Display;
  std::string Pointer;
  FieldPath key(const std::string &Name) const {
    return {Display.empty() ? Name : Display + "." + Name, appendPointer(Pointer, Name)};
  }
  FieldPath index(size_t I) const {
    return {Display + "[" + std::to_string(I) + "]", appendPointer(Pointer, std::to_string(I))};
  }
};

/// "a string", "the number 2.5": what was found where something else was due.
std::string describe(const json &J) {
  if (J.is_number())
    return "the number " + J.dump();
  if (J.is_string()) {
    std::string Text = J.dump();
    return "the string " + (Text.size() > 40 ? Text.substr(0, 37) + "...\"" : Text);
  }
  if (J.is_boolean())
    return J.get<bool>() ? "true" : "false";
  if (J.is_null())
    return "null";
  return std::string(J.is_object() ? "an object" : J.is_array() ? "an array" : "binary data");
}

/// "\"copy_streaming\"", or "the default" when the step names none.
std::string describePrimitive(const Step &St) {
  return St.Primitive.empty() ? "the default" : "\"" + St.Primitive + "\"";
}

class PlanReader {
public:
  PlanReader(SourceManager &SM, DiagnosticEngine &Diags, const LocatedJson *Where,
             const ReadOptions &Options)
      : SM(SM), Diags(Diags), Where(Where), Options(Options) {}

  std::optional<Plan> read(const json &Root);

private:
  bool fail(const FieldPath &P, const std::string &Msg) {
    SourceLoc Loc = Where ? Where->locate(SM, P.Pointer) : SourceLoc{};
    Diags.error(Loc, P.Display.empty() ? Msg : P.Display + ": " + Msg);
    return false;
  }

  /// J must be an object whose keys are all in Allowed.
  bool object(const json &J, const FieldPath &P, std::initializer_list<const char *> Allowed) {
    if (!J.is_object())
      return fail(P, "expected an object, found " + describe(J));
    for (auto It = J.begin(); It != J.end(); ++It) {
      bool Known = false;
      for (const char *Name : Allowed)
        Known |= It.key() == Name;
      if (!Known)
        return fail(P.key(It.key()), "unknown field");
    }
    return true;
  }

  const json *member(const json &Obj, const FieldPath &P, const char *Name, bool Required) {
    auto It = Obj.find(Name);
    if (It != Obj.end())
      return &*It;
    if (Required)
      fail(P, std::string("missing field '") + Name + "'");
    return nullptr;
  }

  /// An integer field in [Min, Max]; Range says what the bounds mean ("is not
  /// a rank (plan has 8 ranks)"), defaulting to the numbers themselves.
  bool integer(const json &Obj, const FieldPath &P, const char *Name, int64_t Min, int64_t Max,
               int64_t &Out, const std::string &Range = "") {
    const json *J = member(Obj, P, Name, true);
    if (!J)
      return false;
    FieldPath FP = P.key(Name);
    if (!J->is_number_integer())
      return fail(FP, "expected an integer, found " + describe(*J));
    bool TooBig = J->is_number_unsigned() &&
                  J->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    int64_t V = TooBig ? std::numeric_limits<int64_t>::max() : J->get<int64_t>();
    if (TooBig || V < Min || V > Max)
      return fail(FP, J->dump() + " " +
                          (Range.empty() ? "is not in [" + std::to_string(Min) + ", " +
                                               std::to_string(Max) + "]"
                                         : Range));
    Out = V;
    return true;
  }

  bool int32(const json &Obj, const FieldPath &P, const char *Name, int64_t Min, int64_t Max,
             int32_t &Out, const std::string &Range = "") {
    int64_t V;
    if (!integer(Obj, P, Name, Min, Max, V, Range))
      return false;
    Out = static_cast<int32_t>(V);
    return true;
  }

  /// An optional true or false; Out stays unset when the field is absent.
  bool flag(const json &Obj, const FieldPath &P, const char *Name, std::optional<bool> &Out) {
    const json *J = member(Obj, P, Name, false);
    if (!J)
      return true;
    if (!J->is_boolean())
      return fail(P.key(Name), "expected true or false, found " + describe(*J));
    Out = J->get<bool>();
    return true;
  }

  bool string(const json &Obj, const FieldPath &P, const char *Name, std::string &Out,
              bool Required = true) {
    const json *J = member(Obj, P, Name, Required);
    if (!J)
      return !Required;
    if (!J->is_string())
      return fail(P.key(Name), "expected a string, found " + describe(*J));
    Out = J->get<std::string>();
    return true;
  }

  /// A string field that must be one of Names (spelled by Spell).
  template <typename Kind, typename SpellFn>
  bool oneOf(const json &Obj, const FieldPath &P, const char *Name, std::span<const Kind> Kinds,
             SpellFn Spell, Kind &Out) {
    std::string Text;
    if (!string(Obj, P, Name, Text))
      return false;
    std::string Known;
    for (Kind K : Kinds) {
      if (Spell(K) == Text) {
        Out = K;
        return true;
      }
      Known += std::string(Known.empty() ? "" : ", ") + std::string(Spell(K));
    }
    return fail(P.key(Name), "unknown value \"" + Text + "\" (expected one of " + Known + ")");
  }

  bool array(const json &Obj, const FieldPath &P, const char *Name, const json *&Out) {
    Out = member(Obj, P, Name, true);
    if (!Out)
      return false;
    if (!Out->is_array())
      return fail(P.key(Name), "expected an array, found " + describe(*Out));
    return true;
  }

  bool header(const json &Root, sched::Schedule &S, PlanInfo &Info);
  bool units(const json &Root, sched::Schedule &S);
  bool remap(const json &Root, sched::Schedule &S);
  bool sizes(const json &Root, PlanInfo &Info);
  /// The kind of call the plan was chosen for (PlanInfo::InPlace,
  /// PlanInfo::MappedBuffers).
  bool calls(const json &Root, PlanInfo &Info);
  /// The "rotation" of a version 3 plan, into S.Rotated.
  bool rotation(const json &J, sched::Schedule &S);
  /// The links of every rank of a rotated plan, from rank 0's.
  void rotateLinks(Plan &Out);
  bool rank(const json &J, const FieldPath &P, int32_t R, Plan &Out);
  bool step(const json &J, const FieldPath &P, int32_t R, const sched::Schedule &S, Step &Out);
  bool run(const json &J, const FieldPath &P, int32_t R, const sched::Schedule &S,
           RolledStep &Out);
  bool runPeer(const FieldPath &P, const RolledStep &Run, const char *Name, int32_t Base,
               int64_t Move, int32_t R, const sched::Schedule &S);
  bool runSlice(const FieldPath &P, const RolledStep &Run, const char *Name, const Slice &Base,
                int64_t Move, const sched::Schedule &S);
  void expand(Plan &Out, int32_t R);
  bool slice(const json &Obj, const FieldPath &P, const char *Name, const sched::Schedule &S,
             Slice &Out);

  SourceManager &SM;
  DiagnosticEngine &Diags;
  const LocatedJson *Where;
  ReadOptions Options;
  int64_t Version = PlanFormatVersion;
  /// Every rank's channels as written; a rank is expanded from them.
  std::vector<std::vector<std::vector<RolledStep>>> Written;
  /// The plan's source file, registered once, for step locations.
  std::string SourceName = "<unknown source>";
  std::string SourceText;
  std::optional<uint32_t> SourceFile;
};

bool PlanReader::header(const json &Root, sched::Schedule &S, PlanInfo &Info) {
  FieldPath P;
  std::string Format;
  if (!string(Root, P, "format", Format))
    return false;
  if (Format != PlanFormatName)
    return fail(P.key("format"), "\"" + Format + "\" is not a cclc plan (expected \"" +
                                     PlanFormatName + "\")");
  if (!integer(Root, P, "version", 1, std::numeric_limits<int64_t>::max(), Version))
    return false;
  if (Version < OldestPlanFormatVersion || Version > PlanFormatVersion)
    return fail(P.key("version"), "plan format version " + std::to_string(Version) +
                                      " is not supported (this cclc reads versions " +
                                      std::to_string(OldestPlanFormatVersion) + " to " +
                                      std::to_string(PlanFormatVersion) +
                                      "); recompile the plan with this cclc");
  if (!string(Root, P, "algorithm", S.Algorithm))
    return false;
  if (S.Algorithm.empty())
    return fail(P.key("algorithm"), "the algorithm needs a name");
  if (!oneOf(Root, P, "topology", std::span<const TopologyKind>(AllTopologies), topologyName,
             S.Topology))
    return false;
  std::string Coll;
  if (!string(Root, P, "collective", Coll))
    return false;
  std::optional<plan::CollectiveKind> Kind = plan::parseCollective(Coll);
  if (!Kind)
    return fail(P.key("collective"), "unknown collective \"" + Coll + "\"");
  S.Collective = *Kind;
  if (!int32(Root, P, "nranks", 1, MaxRanks, S.NRanks) ||
      !int32(Root, P, "nchannels", 1, MaxChannels, S.NChannels) ||
      !int32(Root, P, "chunks_per_channel", 1, MaxGrid, S.ChunksPerChannel) ||
      !int32(Root, P, "root", 0, S.NRanks - 1, S.Root,
             "is not a rank (plan has " + std::to_string(S.NRanks) + " ranks)") ||
      !int32(Root, P, "buffer_slots", 1, MaxBufferSlots, S.BufferSlots,
             "is not in [1, " + std::to_string(MaxBufferSlots) +
                 "] (the most messages a connection buffers)"))
    return false;
  if (int64_t(S.NChannels) * S.ChunksPerChannel > MaxGrid)
    return fail(P.key("chunks_per_channel"),
                "nchannels * chunks_per_channel = " +
                    std::to_string(int64_t(S.NChannels) * S.ChunksPerChannel) +
                    " chunks per unit is more than " + std::to_string(MaxGrid));
  if (int64_t(S.NRanks) * S.NChannels > MaxRankChannels)
    return fail(P.key("nchannels"), "nranks * nchannels = " +
                                        std::to_string(int64_t(S.NRanks) * S.NChannels) +
                                        " channel programs is more than " +
                                        std::to_string(MaxRankChannels));
  if (!string(Root, P, "source", Info.Source, false) ||
      !string(Root, P, "source_text", Info.SourceText, false) ||
      !string(Root, P, "target", Info.Target, false) ||
      !string(Root, P, "generator", Info.Generator, false))
    return false;
  if (!Info.Source.empty())
    SourceName = Info.Source;
  SourceText = Info.SourceText;
  return true;
}

bool PlanReader::units(const json &Root, sched::Schedule &S) {
  FieldPath P = FieldPath().key("buffer_units");
  const json *J = member(Root, FieldPath(), "buffer_units", true);
  if (!J || !object(*J, P, {"input", "output", "scratch"}))
    return false;
  sched::BufferUnits Expected = sched::bufferUnits(S.Collective, S.NRanks);
  std::string For = std::string(plan::collectiveName(S.Collective)) + " on " +
                    std::to_string(S.NRanks) + " ranks";
  // Input and output sizes are fixed by the collective; scratch is the
  // schedule's own business, within the grid's bounds.
  int64_t GridLimit = std::numeric_limits<int32_t>::max() / S.chunksPerUnit();
  if (std::max(Expected.Input, Expected.Output) > GridLimit)
    return fail(FieldPath().key("chunks_per_channel"),
                "buffers of " + std::to_string(std::max(Expected.Input, Expected.Output)) +
                    " units of " + std::to_string(S.chunksPerUnit()) +
                    " chunks each are more chunks than a buffer can have (" +
                    std::to_string(std::numeric_limits<int32_t>::max()) + ")");
  return int32(*J, P, "input", Expected.Input, Expected.Input, S.Units.Input,
               "does not match " + For + " (expected " + std::to_string(Expected.Input) + ")") &&
         int32(*J, P, "output", Expected.Output, Expected.Output, S.Units.Output,
               "does not match " + For + " (expected " + std::to_string(Expected.Output) +
                   ")") &&
         int32(*J, P, "scratch", 0, std::min<int64_t>(GridLimit, MaxRanks), S.Units.Scratch);
}

bool PlanReader::remap(const json &Root, sched::Schedule &S) {
  const json *J;
  FieldPath P = FieldPath().key("remap");
  if (!array(Root, FieldPath(), "remap", J))
    return false;
  if (J->size() != size_t(S.NRanks))
    return fail(P, "has " + std::to_string(J->size()) + " entries (plan has " +
                       std::to_string(S.NRanks) + " ranks)");
  std::vector<int32_t> LogicalOf(S.NRanks, -1);
  for (size_t L = 0; L < J->size(); ++L) {
    const json &E = (*J)[L];
    FieldPath EP = P.index(L);
    if (!E.is_number_integer())
      return fail(EP, "expected an integer, found " + describe(E));
    if (E.is_number_unsigned() ? E.get<uint64_t>() >= uint64_t(S.NRanks)
                               : E.get<int64_t>() < 0 || E.get<int64_t>() >= S.NRanks)
      return fail(EP, E.dump() + " is not a rank (plan has " + std::to_string(S.NRanks) +
                          " ranks)");
    int32_t Phys = E.get<int32_t>();
    if (LogicalOf[Phys] >= 0)
      return fail(EP, "physical rank " + std::to_string(Phys) + " is already logical rank " +
                          std::to_string(LogicalOf[Phys]) + "; remap must be a permutation");
    LogicalOf[Phys] = static_cast<int32_t>(L);
    S.Remap.push_back(Phys);
  }
  return true;
}

bool PlanReader::sizes(const json &Root, PlanInfo &Info) {
  FieldPath P;
  int64_t Min;
  if (!integer(Root, P, "min_bytes", 0, std::numeric_limits<int64_t>::max(), Min))
    return false;
  Info.MinBytes = static_cast<uint64_t>(Min);
  const json *Max = member(Root, P, "max_bytes", true);
  if (!Max || Max->is_null())
    return Max != nullptr;
  int64_t MaxValue;
  if (!integer(Root, P, "max_bytes", Min, std::numeric_limits<int64_t>::max(), MaxValue,
               "is less than min_bytes (" + std::to_string(Min) + ")"))
    return false;
  Info.MaxBytes = static_cast<uint64_t>(MaxValue);
  return true;
}

bool PlanReader::calls(const json &Root, PlanInfo &Info) {
  return flag(Root, FieldPath(), "in_place", Info.InPlace) &&
         flag(Root, FieldPath(), "mapped_buffers", Info.MappedBuffers);
}

bool PlanReader::slice(const json &Obj, const FieldPath &P, const char *Name,
                       const sched::Schedule &S, Slice &Out) {
  const json *J = member(Obj, P, Name, true);
  FieldPath SP = P.key(Name);
  if (!J || !object(*J, SP, {"buffer", "chunk", "count"}) ||
      !oneOf(*J, SP, "buffer", std::span<const BufferKind>(AllBuffers), bufferName, Out.Buffer))
    return false;
  int32_t Size = S.bufferChunks(Out.Buffer);
  std::string Grid = std::string(sched::bufferName(Out.Buffer)) + " has " +
                     std::to_string(Size) + " chunks";
  if (!int32(*J, SP, "chunk", 0, Size - 1, Out.Chunk, "is outside the buffer (" + Grid + ")") ||
      !int32(*J, SP, "count", 1, Size - Out.Chunk, Out.Count,
             "chunks from chunk " + std::to_string(Out.Chunk) + " run past the end of " +
                 std::string(sched::bufferName(Out.Buffer)) + " (" + Grid + ")"))
    return false;
  return true;
}

bool PlanReader::step(const json &J, const FieldPath &P, int32_t R, const sched::Schedule &S,
                      Step &Out) {
  if (!object(J, P,
              {"op", "peer", "send_peer", "src", "dst", "with_next", "primitive", "protocol",
               "line", "col", "repeat", "stride"}) ||
      !oneOf(J, P, "op", stepOps(), opName, Out.Op))
    return false;
  OpFields F = fieldsOf(Out.Op);
  std::string Op(sched::opName(Out.Op));
  const std::pair<const char *, bool> Fields[] = {
      {"peer", F.Peer}, {"send_peer", F.SendPeer}, {"src", F.Src}, {"dst", F.Dst}};
  for (auto [Name, Wanted] : Fields)
    if (!Wanted && J.contains(Name))
      return fail(P.key(Name), "a " + Op + " step has no " + Name);
  std::string NotRank = "is not a rank (plan has " + std::to_string(S.NRanks) + " ranks)";
  auto PeerOk = [&](const char *Name, int32_t &Peer) {
    if (!int32(J, P, Name, 0, S.NRanks - 1, Peer, NotRank))
      return false;
    if (Peer == R)
      return fail(P.key(Name), std::to_string(Peer) + " is the step's own rank");
    return true;
  };
  if ((F.Peer && !PeerOk("peer", Out.Peer)) || (F.SendPeer && !PeerOk("send_peer", Out.SendPeer)) ||
      (F.Src && !slice(J, P, "src", S, Out.Src)) || (F.Dst && !slice(J, P, "dst", S, Out.Dst)))
    return false;
  if (const json *W = member(J, P, "with_next", false)) {
    if (!W->is_boolean())
      return fail(P.key("with_next"), "expected true or false, found " + describe(*W));
    Out.WithNext = W->get<bool>();
  }
  if (!string(J, P, "primitive", Out.Primitive, false))
    return false;
  if (J.contains("primitive") && !isPrimitiveName(Out.Primitive))
    return fail(P.key("primitive"), "\"" + Out.Primitive + "\" is not a primitive's name");
  if (J.contains("protocol")) {
    if (!oneOf(J, P, "protocol", plan::allProtocols(), plan::protocolName, Out.Proto))
      return false;
    if (!opSends(Out.Op) && !opReceives(Out.Op))
      return fail(P.key("protocol"), "a " + Op + " step moves no message, so it has no protocol");
    if (!Out.Primitive.empty() && Out.Proto != sched::Protocol::Simple)
      return fail(P.key("protocol"), "the step names its primitive (\"" + Out.Primitive +
                                         "\"), which decides how its messages travel");
  }
  if (J.contains("line") || J.contains("col")) {
    int32_t Line, Col;
    constexpr int64_t MaxPos = std::numeric_limits<int32_t>::max();
    if (!int32(J, P, "line", 1, MaxPos, Line) || !int32(J, P, "col", 1, MaxPos, Col))
      return false;
    if (!SourceFile)
      SourceFile = recordedSourceFile(SM, SourceName, SourceText);
    Out.Loc = SourceLoc{*SourceFile, uint32_t(Line), uint32_t(Col)};
  }
  return true;
}

bool PlanReader::runPeer(const FieldPath &P, const RolledStep &Run, const char *Name,
                         int32_t Base, int64_t Move, int32_t R, const sched::Schedule &S) {
  // Peers move by a constant, so the first and last bound them all.
  int64_t Last = Base + (Run.Repeat - 1) * Move;
  if (Last < 0 || Last >= S.NRanks)
    return fail(P.key("stride").key(Name),
                "the last of " + std::to_string(Run.Repeat) + " repetitions has " + Name + " " +
                    std::to_string(Last) + ", which is not a rank (plan has " +
                    std::to_string(S.NRanks) + " ranks)");
  if (Move != 0 && (R - Base) % Move == 0 && (R - Base) / Move >= 0 &&
      (R - Base) / Move < Run.Repeat)
    return fail(P.key("stride").key(Name),
                "repetition " + std::to_string((R - Base) / Move) + " has " + Name + " " +
                    std::to_string(R) + ", the step's own rank");
  return true;
}

bool PlanReader::runSlice(const FieldPath &P, const RolledStep &Run, const char *Name,
                          const Slice &Base, int64_t Move, const sched::Schedule &S) {
  int64_t Last = Base.Chunk + (Run.Repeat - 1) * Move;
  int32_t Size = S.bufferChunks(Base.Buffer);
  if (Last < 0 || Last + Base.Count > Size)
    return fail(P.key("stride").key(Name),
                "the last of " + std::to_string(Run.Repeat) + " repetitions starts at chunk " +
                    std::to_string(Last) + ", so its " + std::to_string(Base.Count) +
                    " chunks are not all inside " + std::string(sched::bufferName(Base.Buffer)) +
                    " (" + std::to_string(Size) + " chunks)");
  return true;
}

bool PlanReader::run(const json &J, const FieldPath &P, int32_t R, const sched::Schedule &S,
                     RolledStep &Out) {
  if (!step(J, P, R, S, Out.Base))
    return false;
  for (const char *Name : {"repeat", "stride"})
    if (Version < 2 && J.contains(Name))
      return fail(P.key(Name), "unknown field (steps are rolled from plan format version 2)");
  if (!J.contains("repeat")) {
    if (J.contains("stride"))
      return fail(P.key("stride"), "a stride needs a repeat count");
    return true;
  }
  if (!integer(J, P, "repeat", 1, MaxRankSteps, Out.Repeat,
               "is not in [1, " + std::to_string(MaxRankSteps) + "] (a rank's most steps)"))
    return false;
  if (Out.Base.WithNext && Out.Repeat > 1)
    return fail(P.key("repeat"), "a step that runs with the next one is not repeated");
  const json *Move = member(J, P, "stride", false);
  if (!Move)
    return true;
  FieldPath MP = P.key("stride");
  if (!object(*Move, MP, {"peer", "send_peer", "src", "dst"}))
    return false;
  OpFields F = fieldsOf(Out.Base.Op);
  const std::tuple<const char *, bool, int64_t *> Fields[] = {
      {"peer", F.Peer, &Out.Move.Peer},
      {"send_peer", F.SendPeer, &Out.Move.SendPeer},
      {"src", F.Src, &Out.Move.Src},
      {"dst", F.Dst, &Out.Move.Dst}};
  constexpr int64_t MaxMove = std::numeric_limits<int32_t>::max();
  for (auto [Name, Wanted, Into] : Fields) {
    if (!Move->contains(Name))
      continue;
    if (!Wanted)
      return fail(MP.key(Name), std::string("a ") + std::string(opName(Out.Base.Op)) +
                                    " step has no " + Name + " to move");
    if (!integer(*Move, MP, Name, -MaxMove, MaxMove, *Into))
      return false;
  }
  const Step &B = Out.Base;
  return (!F.Peer || runPeer(P, Out, "peer", B.Peer, Out.Move.Peer, R, S)) &&
         (!F.SendPeer || runPeer(P, Out, "send_peer", B.SendPeer, Out.Move.SendPeer, R, S)) &&
         (!F.Src || runSlice(P, Out, "src", B.Src, Out.Move.Src, S)) &&
         (!F.Dst || runSlice(P, Out, "dst", B.Dst, Out.Move.Dst, S));
}

bool PlanReader::rank(const json &J, const FieldPath &P, int32_t R, Plan &Out) {
  sched::Schedule &S = Out.Sched;
  if (!object(J, P, {"rank", "logical_rank", "channels"}))
    return false;
  sched::RankProgram &Prog = S.Ranks.emplace_back();
  int32_t Self;
  if (!int32(J, P, "rank", R, R, Self, "does not match its position in ranks (" +
                                            std::to_string(R) + ")"))
    return false;
  int32_t Logical = 0;
  while (S.Remap[Logical] != R)
    ++Logical;
  if (!int32(J, P, "logical_rank", Logical, Logical, Prog.LogicalRank,
             "disagrees with remap, which places logical rank " + std::to_string(Logical) +
                 " here"))
    return false;
  const json *Channels;
  if (!array(J, P, "channels", Channels))
    return false;
  FieldPath CP = P.key("channels");
  if (Channels->size() != size_t(S.NChannels))
    return fail(CP, "has " + std::to_string(Channels->size()) + " entries (plan has " +
                        std::to_string(S.NChannels) + " channels)");
  Prog.Channels.resize(size_t(S.NChannels));
  std::vector<std::vector<RolledStep>> &Mine = Written.emplace_back(size_t(S.NChannels));
  int64_t RankSteps = 0;
  for (size_t C = 0; C < Channels->size(); ++C) {
    FieldPath ChP = CP.index(C);
    const json &Ch = (*Channels)[C];
    const json *Steps;
    if (!object(Ch, ChP, {"steps"}) || !array(Ch, ChP, "steps", Steps))
      return false;
    std::vector<RolledStep> &Runs = Mine[C];
    for (size_t I = 0; I < Steps->size(); ++I) {
      FieldPath SP = ChP.key("steps").index(I);
      if (!run((*Steps)[I], SP, R, S, Runs.emplace_back()))
        return false;
      // One primitive performs both halves of an exchange.
      const RolledStep &Done = Runs.back();
      if (I > 0 && Runs[I - 1].Base.WithNext && Runs[I - 1].Base.Primitive != Done.Base.Primitive)
        return fail(SP, "runs with the step before it, so it needs the same primitive (" +
                            describePrimitive(Runs[I - 1].Base) + ", not " +
                            describePrimitive(Done.Base) + ")");
      if (I > 0 && Runs[I - 1].Base.WithNext && Runs[I - 1].Base.Proto != Done.Base.Proto)
        return fail(SP, "runs with the step before it, so it needs the same protocol (" +
                            std::string(plan::protocolName(Runs[I - 1].Base.Proto)) + ", not " +
                            std::string(plan::protocolName(Done.Base.Proto)) + ")");
      // Rank r moves rank 0's single chunks around their region and keeps
      // whole regions; anything else would leave it.
      const OpFields Fields = fieldsOf(Done.Base.Op);
      for (const Slice *X :
           {Fields.Src ? &Done.Base.Src : nullptr, Fields.Dst ? &Done.Base.Dst : nullptr})
        if (S.Rotated && X && X->Count != 1 && X->Count != S.channelChunks(X->Buffer))
          return fail(SP.key(X == &Done.Base.Src ? "src" : "dst"),
                      "a rotated plan's slices are single chunks or a channel's whole region, "
                      "not " + std::to_string(X->Count) + " chunks");
      RankSteps += Done.Repeat;
      if (RankSteps > MaxRankSteps)
        return fail(SP, "rank " + std::to_string(R) + "'s program expands to more than " +
                            std::to_string(MaxRankSteps) + " steps");
      // Buffers and sizes are the same in every repetition; peers move only
      // when the stride moves them.
      widenShape(Out.Shape, Done.Base, S);
      bool PeersMove = Done.Move.Peer != 0 || Done.Move.SendPeer != 0;
      for (int64_t K = 0; K < (PeersMove ? Done.Repeat : 1); ++K)
        addLinks(Out.Links, R, int(C), Done.at(K));
    }
  }
  Out.Steps += RankSteps;
  return true;
}

void PlanReader::expand(Plan &Out, int32_t R) {
  const sched::Schedule &S = Out.Sched;
  sched::RankProgram &Prog = Out.Sched.Ranks[size_t(R)];
  for (size_t C = 0; C < Prog.Channels.size(); ++C)
    for (const RolledStep &Run : Written[S.Rotated ? 0 : size_t(R)][C])
      for (int64_t K = 0; K < Run.Repeat; ++K)
        Prog.Channels[C].Steps.push_back(S.Rotated ? rotatedStep(S, Run.at(K), R) : Run.at(K));
}

bool PlanReader::rotation(const json &J, sched::Schedule &S) {
  FieldPath P = FieldPath().key("rotation");
  if (Version < PlanFormatVersion)
    return fail(P, "needs plan format version " + std::to_string(PlanFormatVersion) +
                       " (this plan is version " + std::to_string(Version) + ")");
  for (int32_t R = 0; R < S.NRanks; ++R)
    if (S.Remap[size_t(R)] != R)
      return fail(P, "a rotated plan needs the identity remap: rank r runs rank 0's program "
                     "moved r ranks on");
  const int32_t Region = std::max({S.channelChunks(BufferKind::Input),
                                   S.channelChunks(BufferKind::Output),
                                   S.channelChunks(BufferKind::Scratch)});
  int32_t ChunkStep = 0;
  if (!object(J, P, {"chunk_step"}) ||
      !int32(J, P, "chunk_step", 0, Region - 1, ChunkStep,
             "is not a chunk of a channel's region (" + std::to_string(Region) + " chunks)"))
    return false;
  S.Rotated = sched::Rotation{ChunkStep};
  return true;
}

void PlanReader::rotateLinks(Plan &Out) {
  const int32_t N = Out.Sched.NRanks;
  const LinkSet RankZero = Out.Links;
  for (int32_t R = 1; R < N; ++R)
    for (auto [From, To, Channel] : RankZero)
      Out.Links.emplace((From + R) % N, (To + R) % N, Channel);
}

std::optional<Plan> PlanReader::read(const json &Root) {
  Plan Result;
  sched::Schedule &S = Result.Sched;
  FieldPath P;
  if (!object(Root, P,
              {"format", "version", "generator", "source", "source_text", "target", "algorithm",
               "collective",
               "topology", "nranks", "nchannels", "chunks_per_channel", "root", "buffer_slots",
               "buffer_units", "remap", "min_bytes", "max_bytes", "in_place", "mapped_buffers",
               "rotation", "ranks"}) ||
      !header(Root, S, Result.Info) || !units(Root, S) || !remap(Root, S) ||
      !sizes(Root, Result.Info) || !calls(Root, Result.Info))
    return std::nullopt;
  if (const json *Rotation = member(Root, P, "rotation", false); Rotation && !rotation(*Rotation, S))
    return std::nullopt;
  const json *Ranks;
  if (!array(Root, P, "ranks", Ranks))
    return std::nullopt;
  // A rotated plan holds rank 0's program alone.
  const size_t Held = S.Rotated ? 1 : size_t(S.NRanks);
  if (Ranks->size() != Held) {
    fail(P.key("ranks"), "has " + std::to_string(Ranks->size()) + " entries (" +
                             (S.Rotated ? std::string("a rotated plan holds rank 0's alone")
                                        : "plan has " + std::to_string(S.NRanks) + " ranks") +
                             ")");
    return std::nullopt;
  }
  Result.Shape = scheduleShape(S);
  for (size_t R = 0; R < Held; ++R)
    if (!rank((*Ranks)[R], P.key("ranks").index(R), int32_t(R), Result))
      return std::nullopt;
  if (S.Rotated) {
    // Every rank runs as many steps as rank 0, over rank 0's links moved on.
    Result.Steps *= S.NRanks;
    rotateLinks(Result);
    if (Options.KeepRotation) {
      expand(Result, 0);
      return Result;
    }
    for (int32_t R = 1; R < S.NRanks; ++R)
      S.Ranks.push_back({R, std::vector<sched::ChannelProgram>(size_t(S.NChannels))});
  }
  Result.Complete = Result.Steps <= Options.FullSteps;
  if (!Result.Complete && !Options.Rank) {
    fail(P.key("ranks"), "the ranks' programs expand to " + std::to_string(Result.Steps) +
                             " steps, more than the " + std::to_string(Options.FullSteps) +
                             " a reader of every rank holds");
    return std::nullopt;
  }
  for (int32_t R = 0; R < S.NRanks; ++R)
    if (Result.Complete || R == *Options.Rank)
      expand(Result, R);
  // The ranks read are written out: the schedule is an ordinary one.
  S.Rotated.reset();
  return Result;
}

} // namespace

json scheduleToPlan(const sched::Schedule &S, const PlanInfo &Info) {
  json J;
  J["format"] = PlanFormatName;
  J["version"] = S.Rotated ? PlanFormatVersion : RolledPlanFormatVersion;
  if (S.Rotated)
    J["rotation"] = {{"chunk_step", S.Rotated->ChunkStep}};
  if (!Info.Generator.empty())
    J["generator"] = Info.Generator;
  if (!Info.Source.empty())
    J["source"] = Info.Source;
  if (!Info.SourceText.empty())
    J["source_text"] = Info.SourceText;
  if (!Info.Target.empty())
    J["target"] = Info.Target;
  J["algorithm"] = S.Algorithm;
  J["collective"] = std::string(plan::collectiveName(S.Collective));
  J["topology"] = std::string(plan::topologyName(S.Topology));
  J["nranks"] = S.NRanks;
  J["nchannels"] = S.NChannels;
  J["chunks_per_channel"] = S.ChunksPerChannel;
  J["root"] = S.Root;
  J["buffer_slots"] = S.BufferSlots;
  J["buffer_units"] = {
      {"input", S.Units.Input}, {"output", S.Units.Output}, {"scratch", S.Units.Scratch}};
  J["remap"] = S.Remap;
  J["min_bytes"] = Info.MinBytes;
  J["max_bytes"] = Info.MaxBytes ? json(*Info.MaxBytes) : json(nullptr);
  if (Info.InPlace)
    J["in_place"] = *Info.InPlace;
  if (Info.MappedBuffers)
    J["mapped_buffers"] = *Info.MappedBuffers;
  json Ranks = json::array();
  for (size_t R = 0; R < S.Ranks.size(); ++R) {
    json Channels = json::array();
    for (const sched::ChannelProgram &C : S.Ranks[R].Channels) {
      json Steps = json::array();
      for (const RolledStep &Run : roll(C.Steps))
        Steps.push_back(rolledToJson(Run));
      Channels.push_back({{"steps", std::move(Steps)}});
    }
    Ranks.push_back({{"rank", R},
                     {"logical_rank", S.Ranks[R].LogicalRank},
                     {"channels", std::move(Channels)}});
  }
  J["ranks"] = std::move(Ranks);
  return J;
}

std::optional<Plan> planToSchedule(const json &Json, SourceManager &SM, DiagnosticEngine &Diags,
                                   const LocatedJson *Where, const ReadOptions &Options) {
  return PlanReader(SM, Diags, Where, Options).read(Json);
}

Plan wholePlan(sched::Schedule S, PlanInfo Info) {
  Plan P;
  P.Links = linksOf(S);
  P.Shape = scheduleShape(S);
  P.Steps = int64_t(S.stepCount());
  P.Sched = std::move(S);
  P.Info = std::move(Info);
  return P;
}

uint32_t recordedSourceFile(SourceManager &SM, const std::string &Name, const std::string &Text) {
  return SM.addBuffer(Name, Text);
}

std::optional<Plan> readPlanFile(uint32_t FileId, SourceManager &SM, DiagnosticEngine &Diags,
                                 const ReadOptions &Options) {
  std::optional<LocatedJson> Doc = parseJsonFile(FileId, SM, Diags, MaxJsonDepth);
  if (!Doc)
    return std::nullopt;
  return planToSchedule(Doc->Value, SM, Diags, &*Doc, Options);
}

} // namespace cclc::plan
