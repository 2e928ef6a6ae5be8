//===- NcclEnv.cpp - The NCCL environment knobs the search honours --------===//

#include "compiler/topology/NcclEnv.h"
#include "compiler/topology/Paths.h"
#include "compiler/topology/Search.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iterator>
#include <ostream>
#include <vector>

namespace cclc::topo {

namespace {

/// A knob's text and where it came from; Name is what errors call it (the
/// variable or the option).
struct RawKnob {
  std::string Text;
  KnobSource Source;
  std::string Name;
};

/// The command-line value when given, else the last of Variables that is set
/// (NCCL reads legacy names first and lets the newer name win).
std::optional<RawKnob> rawKnob(const std::string &Option, const char *OptionName,
                               const std::vector<const char *> &Variables,
                               const EnvLookup &GetEnv) {
  if (!Option.empty())
    return RawKnob{Option, {OptionName, Option}, OptionName};
  std::optional<RawKnob> Found;
  for (const char *Variable : Variables)
    if (const char *Value = GetEnv(Variable))
      Found = RawKnob{Value, {"environment", std::string(Variable) + "=" + Value}, Variable};
  return Found;
}

/// NCCL's parameters are read with strtoll(..., 0): decimal, 0x hex or 0
/// octal. Unlike NCCL, trailing text is an error rather than ignored.
std::optional<long long> parseInteger(const std::string &Text) {
  if (Text.empty())
    return std::nullopt;
  char *End = nullptr;
  errno = 0;
  long long Value = std::strtoll(Text.c_str(), &End, 0);
  if (errno != 0 || *End != '\0')
    return std::nullopt;
  return Value;
}

std::string levelNames() {
  std::string Names;
  for (int T = 0; T <= static_cast<int>(PathType::SYS); ++T)
    Names += (T ? ", " : "") + std::string(pathTypeName(static_cast<PathType>(T)));
  return Names;
}

class Reader {
public:
  Reader(DiagnosticEngine &Diags, const EnvLookup &GetEnv) : Diags(Diags), GetEnv(GetEnv) {}

  void level(Knob<std::optional<PathType>> &Out, const std::optional<RawKnob> &Raw) {
    if (!Raw)
      return;
    if (std::optional<PathType> Level = parseLevel(Raw->Text))
      Out = {Level, Raw->Source};
    else
      bad(*Raw, "a path type (" + levelNames() + ") or a level number (0 LOC, 1 PIX, 2 PXB, "
                                                  "3 PHB, 4 SYS)");
  }

  /// An integer in [Min, Max]; outside it is an error unless Clamp, where
  /// NCCL takes the nearest bound and warns.
  void integer(Knob<int> &Out, const std::optional<RawKnob> &Raw, long long Min, long long Max,
               bool Clamp) {
    if (!Raw)
      return;
    std::optional<long long> Value = parseInteger(Raw->Text);
    std::string Range = std::to_string(Min) + " to " + std::to_string(Max);
    if (!Value || (!Clamp && (*Value < Min || *Value > Max))) {
      bad(*Raw, Clamp ? "an integer" : "an integer from " + Range);
      return;
    }
    long long Kept = std::min(std::max(*Value, Min), Max);
    if (Kept != *Value)
      Diags.warning(SourceLoc{}, Raw->Name + ": " + Raw->Text + " is outside " + Range +
                                     "; NCCL uses " + std::to_string(Kept));
    Out = {static_cast<int>(Kept), Raw->Source};
  }

  /// NCCL's "disable" switches: the value 1 disables, any other integer not.
  void flag(Knob<bool> &Out, const std::optional<RawKnob> &Raw) {
    if (!Raw)
      return;
    if (std::optional<long long> Value = parseInteger(Raw->Text))
      Out = {*Value == 1, Raw->Source};
    else
      bad(*Raw, "an integer (1 disables)");
  }

  std::optional<RawKnob> env(const std::string &Option, const char *OptionName,
                             const std::vector<const char *> &Variables) {
    return rawKnob(Option, OptionName, Variables, GetEnv);
  }

private:
  void bad(const RawKnob &Raw, const std::string &Expected) {
    Diags.error(SourceLoc{}, Raw.Name + ": '" + Raw.Text + "' is not " + Expected);
  }

  DiagnosticEngine &Diags;
  const EnvLookup &GetEnv;
};

std::string describe(const KnobSource &Source) {
  return Source.Name == "environment" ? "environment: " + Source.Text : Source.Name;
}

/// The knobs as (variable, effective value, source), in header order.
struct Shown {
  const char *Name;
  std::string Value;
  const KnobSource *Source;
};

std::vector<Shown> shownKnobs(const System &Sys) {
  const NcclEnv &Env = Sys.Env;
  auto Level = [](PathType T) { return std::string(pathTypeName(T)); };
  return {
      {"NCCL_P2P_LEVEL", Level(p2pLevel(Sys)), &Env.P2pLevel.Source},
      {"peer access", Env.PeerAccess.Value ? "yes" : "no", &Env.PeerAccess.Source},
      {"NCCL_IGNORE_DISABLED_P2P", std::to_string(Env.IgnoreDisabledP2p.Value),
       &Env.IgnoreDisabledP2p.Source},
      {"NCCL_SHM_DISABLE", Env.ShmDisable.Value ? "1" : "0", &Env.ShmDisable.Source},
      {"NCCL_NET_GDR_LEVEL", Level(netGdrLevel(Sys)), &Env.NetGdrLevel.Source},
      {"NCCL_CROSS_NIC", std::to_string(Env.CrossNic.Value), &Env.CrossNic.Source},
      {"NCCL_MIN_NCHANNELS", std::to_string(Env.MinChannels.Value), &Env.MinChannels.Source},
      {"NCCL_MAX_NCHANNELS", std::to_string(Env.MaxChannels.Value), &Env.MaxChannels.Source},
  };
}

} // namespace

std::optional<PathType> parseLevel(const std::string &Text) {
  PathType Type;
  if (parsePathType(Text, Type))
    return Type <= PathType::SYS ? std::optional<PathType>(Type) : std::nullopt;
  static const PathType OldLevels[] = {PathType::LOC, PathType::PIX, PathType::PXB,
                                       PathType::PHB, PathType::SYS};
  std::optional<long long> Old = parseInteger(Text);
  if (!Old || *Old < 0 || Text[0] < '0' || Text[0] > '9')
    return std::nullopt;
  return OldLevels[std::min<long long>(*Old, std::size(OldLevels) - 1)];
}

Knob<std::string> topologyFile(const std::string &Given, const char *OptionName,
                               const EnvLookup &GetEnv) {
  std::optional<RawKnob> Raw = rawKnob(Given, OptionName, {"NCCL_TOPO_FILE"}, GetEnv);
  if (!Raw || Raw->Text.empty())
    return {"", {}};
  return {Raw->Text, Raw->Source};
}

std::optional<NcclEnv> readNcclEnv(const NcclEnvOptions &Options, DiagnosticEngine &Diags,
                                   const EnvLookup &GetEnv) {
  unsigned ErrorsBefore = Diags.errorCount();
  NcclEnv Env;
  Reader R(Diags, GetEnv);
  // NCCL_P2P_DISABLE=1 wins over NCCL_P2P_LEVEL; --p2p-level over both.
  Knob<bool> P2pDisable{false, {}};
  R.flag(P2pDisable, R.env("", "", {"NCCL_P2P_DISABLE"}));
  if (P2pDisable.Value)
    Env.P2pLevel = {PathType::LOC, P2pDisable.Source};
  else
    R.level(Env.P2pLevel, R.env("", "", {"NCCL_P2P_LEVEL"}));
  R.level(Env.P2pLevel, R.env(Options.P2pLevel, "--p2p-level", {}));
  if (Options.NoPeerAccess)
    Env.PeerAccess = {false, {"--no-p2p", ""}};
  R.integer(Env.IgnoreDisabledP2p, R.env("", "", {"NCCL_IGNORE_DISABLED_P2P"}), 0, 2, false);
  R.flag(Env.ShmDisable, R.env(Options.ShmDisable, "--shm-disable", {"NCCL_SHM_DISABLE"}));
  R.level(Env.NetGdrLevel,
          R.env(Options.NetGdrLevel, "--net-gdr-level", {"NCCL_NET_GDR_LEVEL"}));
  R.integer(Env.CrossNic, R.env(Options.CrossNic, "--cross-nic", {"NCCL_CROSS_NIC"}), 0, 2,
            false);
  R.integer(Env.MinChannels,
            R.env(Options.MinChannels, "--min-nchannels", {"NCCL_MIN_NRINGS", "NCCL_MIN_NCHANNELS"}),
            0, MaxChannels, true);
  R.integer(Env.MaxChannels,
            R.env(Options.MaxChannels, "--max-nchannels", {"NCCL_MAX_NRINGS", "NCCL_MAX_NCHANNELS"}),
            1, MaxChannels, true);
  if (Diags.errorCount() != ErrorsBefore)
    return std::nullopt;
  return Env;
}

void printNcclEnv(const System &Sys, std::ostream &OS) {
  for (const Shown &K : shownKnobs(Sys))
    OS << K.Name << " = " << K.Value << " (" << describe(*K.Source) << ")\n";
}

nlohmann::json ncclEnvToJson(const System &Sys) {
  nlohmann::json J = nlohmann::json::object();
  for (const Shown &K : shownKnobs(Sys))
    J[K.Name] = {{"value", K.Value}, {"source", describe(*K.Source)}};
  return J;
}

} // namespace cclc::topo
