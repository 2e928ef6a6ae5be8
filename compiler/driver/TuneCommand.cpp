//===- TuneCommand.cpp - cclc tune ----------------------------------------===//
//
// The cost model predicts which algorithm is fastest at each size; `tune`
// measures it. It compiles every library algorithm of a collective for --nranks
// ranks on this host at several chunk factors, runs each plan with the real
// runtime (cclc-perf, which forks the ranks and checks every result), and
// writes the plans that won, each with the size window it won, into a
// directory a job loads (CCLC_PLAN_DIR, or cclc-perf --plan). Beside the
// measured table it prints what the cost model would have chosen, and how
// far its predicted times are from the measured ones.
//
// The fastest plan depends on the calls as well as their size: an in-place
// call cannot leave a message where it lies when it overwrites it later, and
// buffers from cclcMemAlloc take large messages in one memcpy. So tune
// measures the calls the job makes: out of place or in place (--in-place),
// on heap buffers or cclcMemAlloc's (--registered, cclc-perf's -R), or on
// GPU buffers run by the GPU executors (--gpu), where the protocols differ
// too, so that each algorithm and factor is measured by each of
// --protocols.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "InputOutput.h"
#include "Library.h"
#include "MemoryBudget.h"

#include "compiler/Compile.h"
#include "compiler/cost/Explain.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace cclc::driver {

namespace {

struct TuneOptions {
  std::string Collective;
  int NRanks = 2;
  std::string Output;
  std::string Algorithms = defaultAlgorithmsDir();
  std::vector<int32_t> Factors = {1, 2, 4};
  std::string MinBytes = "4";
  std::string MaxBytes = "64M";
  int Iterations = 50;
  int Warmup = 5;
  int Rounds = 2;
  /// Whether the calls measured run in place, and on cclcMemAlloc's buffers.
  bool InPlace = false;
  int Registered = 0;
  /// Whether they run on GPU buffers, and the protocols tried there.
  bool Gpu = false;
  std::vector<std::string> Protocols = {"simple"};
  std::string Perf;
};

/// One plan measured: an algorithm at a chunk factor, by a protocol.
struct Candidate {
  /// "ring_allreduce x2", and " ll128" after it for a protocol other than
  /// the simple one.
  std::string Name;
  std::string Algorithm;
  int32_t Factor = 1;
  sched::Protocol Proto = sched::Protocol::Simple;
  sched::Schedule Schedule;
  plan::PlanInfo Info;
  std::filesystem::path Plan; ///< Where it was written to be measured.
  /// Per size, the measured microseconds of each round.
  std::vector<std::vector<double>> TimesUs;
};

/// cclc-perf beside this executable, as installed and as built.
std::string defaultPerf() {
  std::error_code Error;
  std::filesystem::path Self = std::filesystem::read_symlink("/proc/self/exe", Error);
  return Error ? "cclc-perf" : (Self.parent_path() / "cclc-perf").string();
}

/// Runs Argv with its standard output captured in Out; its standard error
/// goes to ours. False, with the reason in Error, when it could not run or
/// did not exit with status 0.
bool runCapturing(const std::vector<std::string> &Argv, std::string &Out, std::string &Error) {
  int Pipe[2];
  if (::pipe(Pipe) != 0) {
    Error = "cannot make a pipe";
    return false;
  }
  pid_t Child = ::fork();
  if (Child < 0) {
    Error = "cannot fork";
    return false;
  }
  if (Child == 0) {
    ::dup2(Pipe[1], STDOUT_FILENO);
    ::close(Pipe[0]);
    ::close(Pipe[1]);
    std::vector<char *> Args;
    for (const std::string &A : Argv)
      Args.push_back(const_cast<char *>(A.c_str()));
    Args.push_back(nullptr);
    ::execvp(Args[0], Args.data());
    std::fprintf(stderr, "cclc: error: cannot run %s\n", Args[0]);
    ::_exit(127);
  }
  ::close(Pipe[1]);
  char Buffer[4096];
  for (ssize_t Got; (Got = ::read(Pipe[0], Buffer, sizeof Buffer)) != 0;)
    if (Got > 0)
      Out.append(Buffer, size_t(Got));
    else if (errno != EINTR)
      break;
  ::close(Pipe[0]);
  int Status = 0;
  while (::waitpid(Child, &Status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(Status) && WEXITSTATUS(Status) == 0)
    return true;
  Error = WIFEXITED(Status) ? "exited with status " + std::to_string(WEXITSTATUS(Status))
                            : "was killed by signal " + std::to_string(WTERMSIG(Status));
  return false;
}

/// The rows of cclc-perf's table: size, then the out-of-place time in us,
/// or the in-place time where InPlace; a row with a wrong element (in
/// either) is an error naming its size.
bool parsePerfTable(const std::string &Text, bool InPlace,
                    std::vector<std::pair<uint64_t, double>> &Rows, std::string &Error) {
  std::istringstream Lines(Text);
  for (std::string Line; std::getline(Lines, Line);) {
    if (Line.empty() || Line[0] == '#')
      continue;
    std::istringstream Fields(Line);
    uint64_t Bytes = 0, Count = 0;
    std::string Type, Op, Root;
    double Time = 0, AlgBw = 0, BusBw = 0, InTime = 0, InAlgBw = 0, InBusBw = 0;
    long Wrong = 0, InWrong = 0;
    if (!(Fields >> Bytes >> Count >> Type >> Op >> Root >> Time >> AlgBw >> BusBw >> Wrong >>
          InTime >> InAlgBw >> InBusBw >> InWrong))
      continue;
    if (Wrong != 0 || InWrong != 0) {
      Error = std::to_string(Wrong + InWrong) + " wrong elements at " + plan::formatBytes(Bytes);
      return false;
    }
    Rows.emplace_back(Bytes, InPlace ? InTime : Time);
  }
  if (Rows.empty())
    Error = "it printed no results";
  return !Rows.empty();
}

/// The calls a plan serves: its collective, and the kind of call it was
/// chosen for (plan::PlanInfo), unset for either.
struct PlanCalls {
  std::string Collective;
  std::optional<bool> InPlace;
  std::optional<bool> MappedBuffers;

  /// Whether a call could be served by both.
  bool overlaps(const PlanCalls &Other) const {
    auto Meet = [](std::optional<bool> A, std::optional<bool> B) { return !A || !B || *A == *B; };
    return Collective == Other.Collective && Meet(InPlace, Other.InPlace) &&
           Meet(MappedBuffers, Other.MappedBuffers);
  }
};

/// What a JSON file in the output directory declares; no collective when
/// it is not a plan at all (a job loading the directory would refuse it,
/// but that is not tune's to decide).
PlanCalls planCalls(const std::filesystem::path &File) {
  std::ifstream In(File);
  nlohmann::json Plan = nlohmann::json::parse(In, nullptr, /*allow_exceptions=*/false);
  PlanCalls Calls;
  if (!Plan.is_object())
    return Calls;
  if (Plan.contains("collective") && Plan["collective"].is_string())
    Calls.Collective = Plan["collective"].get<std::string>();
  if (Plan.contains("in_place") && Plan["in_place"].is_boolean())
    Calls.InPlace = Plan["in_place"].get<bool>();
  if (Plan.contains("mapped_buffers") && Plan["mapped_buffers"].is_boolean())
    Calls.MappedBuffers = Plan["mapped_buffers"].get<bool>();
  return Calls;
}

/// "ring_allreduce-x2", and "-ll128" after it for a protocol other than
/// the simple one: how C's plan files begin.
std::string fileStem(const Candidate &C) {
  std::string Stem = C.Algorithm + "-x" + std::to_string(C.Factor);
  if (C.Proto != sched::Protocol::Simple)
    Stem += "-" + std::string(plan::protocolName(C.Proto));
  return Stem;
}

double median(std::vector<double> Values) {
  std::sort(Values.begin(), Values.end());
  size_t Mid = Values.size() / 2;
  return Values.size() % 2 ? Values[Mid] : (Values[Mid - 1] + Values[Mid]) / 2;
}

class Tuner {
public:
  Tuner(const TuneOptions &Opts, DiagnosticEngine &Diags, SourceManager &SM)
      : Opts(Opts), Diags(Diags), SM(SM) {}

  bool run();

private:
  bool compileCandidates(plan::CollectiveKind Collective, const std::filesystem::path &Work);
  bool measure(Candidate &C, int Round);
  std::vector<cost::AlgorithmCurve> measuredCurves() const;
  void printPredictions(const std::vector<cost::AlgorithmCurve> &Measured) const;
  /// What the candidates are compiled for and predicted on: the ranks on
  /// CPUs, or on GPUs for --gpu.
  target::Target target() const {
    return Opts.Gpu ? target::flatTarget(Opts.NRanks) : target::cpuTarget(Opts.NRanks);
  }
  bool writeWinners(const std::vector<cost::AlgorithmCurve> &Measured);
  /// The calls the tuned plans serve: those measured. Buffers are host
  /// buffers, mapped or not, unless the calls ran on the GPU. Only once
  /// the collective's name has been checked.
  PlanCalls tunedCalls() const {
    return {std::string(plan::collectiveName(*plan::parseCollective(Opts.Collective))),
            Opts.InPlace,
            Opts.Gpu ? std::nullopt : std::optional<bool>(Opts.Registered == 1)};
  }
  bool error(const std::string &Msg) {
    Diags.error(SourceLoc{}, Msg);
    return false;
  }

  const TuneOptions &Opts;
  DiagnosticEngine &Diags;
  SourceManager &SM;
  dsl::OperationCatalog Ops;
  std::vector<Candidate> Candidates;
  std::vector<uint64_t> Sizes;
};

bool Tuner::compileCandidates(plan::CollectiveKind Collective,
                              const std::filesystem::path &Work) {
  target::Target Target = target();
  DiagnosticEngine Quiet(SM);
  Quiet.setSilent(true);
  std::ostream Discard(nullptr);
  for (const LibraryAlgorithm &Lib : libraryAlgorithms(Opts.Algorithms, Collective, SM, Ops))
    for (int32_t Factor : Opts.Factors)
      for (const std::string &Protocol : Opts.Protocols) {
        compiler::BuildOptions Build;
        Build.Pipeline.ChunksFactor = Factor;
        Build.Pipeline.Proto = *plan::parseProtocol(Protocol);
        // An algorithm that does not fit this rank count (a power-of-two
        // butterfly on 3 ranks) is not a candidate.
        std::optional<sched::Schedule> S =
            compiler::buildSchedule(*Lib.Algo, Target, Build, Discard, Quiet);
        if (!S)
          continue;
        Candidate C;
        C.Algorithm = S->Algorithm;
        C.Factor = Factor;
        C.Proto = Build.Pipeline.Proto;
        const bool Simple = C.Proto == sched::Protocol::Simple;
        C.Name = S->Algorithm + " x" + std::to_string(Factor) + (Simple ? "" : " " + Protocol);
        C.Info.Source = Lib.File.filename().string();
        C.Info.SourceText = std::string(SM.getText(Lib.FileId));
        C.Info.Target = Target.Description;
        C.Info.Generator = generatorName();
        C.Plan = Work / (fileStem(C) + ".json");
        C.Schedule = std::move(*S);
        if (!writeFile(C.Plan.string(), plan::scheduleToPlan(C.Schedule, C.Info).dump(1), Diags))
          return false;
        Candidates.push_back(std::move(C));
      }
  if (Candidates.empty())
    return error("no " + std::string(plan::collectiveName(Collective)) + " algorithm in " +
                 Opts.Algorithms + " compiles for " + std::to_string(Opts.NRanks) + " ranks");
  return true;
}

bool Tuner::measure(Candidate &C, int Round) {
  std::string Name(plan::collectiveName(C.Schedule.Collective));
  Name.erase(std::remove(Name.begin(), Name.end(), '_'), Name.end());
  std::vector<std::string> Argv = {Opts.Perf,  Name,
                                   "-np",      std::to_string(Opts.NRanks),
                                   "--plan",   C.Plan.string(),
                                   "-b",       Opts.MinBytes,
                                   "-e",       Opts.MaxBytes,
                                   "-f",       "4",
                                   "-n",       std::to_string(Opts.Iterations),
                                   "-w",       std::to_string(Opts.Warmup),
                                   "-c",       "1",
                                   "-R",       Opts.Registered ? "1" : "0"};
  if (Opts.Gpu)
    Argv.push_back("--gpu");
  std::string Out, Why;
  std::vector<std::pair<uint64_t, double>> Rows;
  if (!runCapturing(Argv, Out, Why) || !parsePerfTable(Out, Opts.InPlace, Rows, Why))
    return error("measuring " + C.Name + " with " + Opts.Perf + " failed: " + Why);
  if (Sizes.empty())
    for (const auto &Row : Rows)
      Sizes.push_back(Row.first);
  if (Rows.size() != Sizes.size())
    return error(Opts.Perf + " measured other sizes for " + C.Name);
  C.TimesUs.resize(Sizes.size());
  for (size_t I = 0; I < Rows.size(); ++I)
    C.TimesUs[I].push_back(Rows[I].second);
  std::cerr << "tune: round " << Round + 1 << ": " << C.Name << " measured\n";
  return true;
}

/// Each candidate's median time per size, as the cost model's curves are
/// laid out, so that the explain tables print them.
std::vector<cost::AlgorithmCurve> Tuner::measuredCurves() const {
  std::vector<cost::AlgorithmCurve> Curves;
  for (const Candidate &C : Candidates) {
    cost::AlgorithmCurve Curve{C.Name, {}};
    for (size_t I = 0; I < Sizes.size(); ++I) {
      cost::Prediction P;
      P.Bytes = Sizes[I];
      P.TimeUs = median(C.TimesUs[I]);
      P.AlgBwGBs = P.TimeUs > 0 ? double(P.Bytes) / (P.TimeUs * 1e3) : 0;
      P.BusBwGBs = P.AlgBwGBs * plan::busBwFactor(C.Schedule.Collective, C.Schedule.NRanks);
      P.ChunkFactor = C.Factor;
      Curve.Points.push_back(P);
    }
    Curves.push_back(std::move(Curve));
  }
  return Curves;
}

/// Fastest index per size, ties to the first.
std::vector<size_t> winners(const std::vector<cost::AlgorithmCurve> &Curves, size_t Sizes) {
  std::vector<size_t> Best(Sizes, 0);
  for (size_t I = 0; I < Sizes; ++I)
    for (size_t C = 1; C < Curves.size(); ++C)
      if (Curves[C].Points[I].TimeUs < Curves[Best[I]].Points[I].TimeUs)
        Best[I] = C;
  return Best;
}

void Tuner::printPredictions(const std::vector<cost::AlgorithmCurve> &Measured) const {
  cost::CostModel Model(target());
  std::vector<cost::AlgorithmCurve> Predicted;
  for (const Candidate &C : Candidates) {
    cost::AlgorithmCurve Curve{C.Name, {}};
    for (uint64_t Bytes : Sizes)
      Curve.Points.push_back({Bytes, Model.simulate(C.Schedule, Bytes), 0, 0, C.Factor});
    Predicted.push_back(std::move(Curve));
  }
  std::vector<size_t> Measure = winners(Measured, Sizes.size());
  std::vector<size_t> Predict = winners(Predicted, Sizes.size());
  std::printf(Opts.Gpu ? "\nmeasured against the cost model (its links are --nranks' default, "
                        "not this host's GPUs)\n"
                      : "\nmeasured against the cost model (its CPU costs are cclc compile "
                        "--cpu's defaults, not this host's)\n");
  std::printf("%12s  %-34s %-34s %10s\n", "size", "measured fastest", "predicted fastest",
              "predicted/measured");
  size_t Agree = 0;
  for (size_t I = 0; I < Sizes.size(); ++I) {
    const size_t W = Measure[I];
    Agree += Predict[I] == W;
    std::printf("%12s  %-34s %-34s %10.2f\n", plan::formatBytes(Sizes[I]).c_str(),
                Measured[W].Name.c_str(), Predicted[Predict[I]].Name.c_str(),
                Predicted[W].Points[I].TimeUs / Measured[W].Points[I].TimeUs);
  }
  std::printf("the cost model chose the measured fastest at %zu of %zu sizes\n", Agree,
              Sizes.size());
}

bool Tuner::writeWinners(const std::vector<cost::AlgorithmCurve> &Measured) {
  std::vector<size_t> Best = winners(Measured, Sizes.size());
  std::printf("\nplans written to %s:\n", Opts.Output.c_str());
  for (size_t First = 0, Last; First < Sizes.size(); First = Last + 1) {
    for (Last = First; Last + 1 < Sizes.size() && Best[Last + 1] == Best[First];)
      ++Last;
    // The window runs from this run's first size (0 for the first run) to
    // just below the next run's (no bound for the last): every size is
    // served by exactly one plan.
    Candidate &C = Candidates[Best[First]];
    cost::SizeWindow Window{First == 0 ? 0 : Sizes[First], std::nullopt};
    if (Last + 1 < Sizes.size())
      Window.MaxBytes = Sizes[Last + 1] - 1;
    plan::PlanInfo Info = C.Info;
    Info.MinBytes = Window.MinBytes;
    Info.MaxBytes = Window.MaxBytes;
    // The plans say which calls they were measured on, so that plans tuned
    // for other calls can share the directory, and a job's runtime serves
    // each call with those of its kind.
    const PlanCalls Calls = tunedCalls();
    Info.InPlace = Calls.InPlace;
    Info.MappedBuffers = Calls.MappedBuffers;
    std::string File = fileStem(C) + (Opts.InPlace ? "-in-place" : "") +
                       (Opts.Registered ? "-mapped" : "") + "-from-" +
                       std::to_string(Window.MinBytes) + ".json";
    if (!writeFile((std::filesystem::path(Opts.Output) / File).string(),
                   plan::scheduleToPlan(C.Schedule, Info).dump(1), Diags))
      return false;
    std::printf("  %-40s %s %s\n", File.c_str(), C.Name.c_str(),
                cost::describeWindow(Window).c_str());
  }
  return true;
}

bool Tuner::run() {
  std::optional<plan::CollectiveKind> Collective = plan::parseCollective(Opts.Collective);
  if (!Collective)
    return error("unknown collective '" + Opts.Collective +
                 "': give allreduce, allgather, reduce_scatter, broadcast, reduce or alltoall");
  for (const std::string &Size : {Opts.MinBytes, Opts.MaxBytes})
    if (!parseMemorySize(Size) || *parseMemorySize(Size) == 0)
      return error("'" + Size + "' is not a message size (like 4, 64K or 16M)");
  if (*parseMemorySize(Opts.MinBytes) > *parseMemorySize(Opts.MaxBytes))
    return error("--min-bytes " + Opts.MinBytes + " is larger than --max-bytes " + Opts.MaxBytes);
  for (const std::string &Protocol : Opts.Protocols)
    if (!Opts.Gpu && Protocol != "simple")
      return error("--protocols " + Protocol +
                   " needs --gpu: host executors send every step the simple way, so every "
                   "protocol would measure the same plan");
  if (Opts.Gpu && Opts.Registered)
    return error("--registered 1 measures host buffers from cclcMemAlloc; it does not go with "
                 "--gpu");

  // Plans of this collective from an earlier tune for the same calls would
  // be loaded beside these and fight over the sizes: the directory must hold
  // none. Other collectives' plans, and this one's for other calls (in
  // place, on mapped buffers), may share it, so one directory serves a job.
  std::error_code Error;
  std::filesystem::create_directories(Opts.Output, Error);
  if (Error)
    return error("cannot make directory " + Opts.Output + ": " + Error.message());
  for (const auto &Entry : std::filesystem::directory_iterator(Opts.Output, Error)) {
    if (Entry.path().extension() != ".json" ||
        !planCalls(Entry.path()).overlaps(tunedCalls()))
      continue;
    return error(Opts.Output + " already holds " + Opts.Collective + " plans for such calls (" +
                 Entry.path().filename().string() +
                 "); a job would load them beside the tuned ones: remove them or name another "
                 "directory");
  }

  std::string Template = (std::filesystem::temp_directory_path() / "cclc-tune-XXXXXX").string();
  if (!::mkdtemp(Template.data()))
    return error("cannot make a temporary directory for the candidate plans");
  const std::filesystem::path Work = Template;
  bool Ok = compileCandidates(*Collective, Work);
  // Rounds take turns through the candidates, so that a noisy moment of
  // the machine falls on several candidates once rather than on one.
  for (int Round = 0; Ok && Round < Opts.Rounds; ++Round)
    for (Candidate &C : Candidates)
      if (!(Ok = measure(C, Round)))
        break;
  if (Ok) {
    std::vector<cost::AlgorithmCurve> Measured = measuredCurves();
    std::printf("%s on %d ranks of this host, %s on %s, median of %d rounds of %d calls (us)\n",
                Opts.Collective.c_str(), Opts.NRanks, Opts.InPlace ? "in place" : "out of place",
                Opts.Gpu          ? "GPU buffers"
                : Opts.Registered ? "cclcMemAlloc's buffers"
                                  : "heap buffers",
                Opts.Rounds, Opts.Iterations);
    cost::printComparison(Measured, std::cout);
    printPredictions(Measured);
    Ok = writeWinners(Measured);
  }
  std::filesystem::remove_all(Work, Error);
  return Ok;
}

} // namespace

void addTuneCommand(CLI::App &App, const CommonOptions &Common, int &ExitCode) {
  auto Opts = std::make_shared<TuneOptions>();
  CLI::App *Cmd = App.add_subcommand(
      "tune", "Measure the library's algorithms of a collective on this host with the runtime, "
              "and write the plans that won, each for the sizes it won");
  Cmd->add_option("collective", Opts->Collective,
                  "allreduce, allgather, reduce_scatter, broadcast, reduce or alltoall")
      ->required();
  Cmd->add_option("--nranks", Opts->NRanks, "Ranks to fork on this host")
      ->required()
      ->check(CLI::Range(2, 64));
  Cmd->add_option("-o,--output", Opts->Output,
                  "Directory for the winning plans (made if missing; must hold no plans)")
      ->required();
  Cmd->add_option("--algorithms", Opts->Algorithms, "The library of algorithms to measure")
      ->capture_default_str();
  Cmd->add_option("--factors", Opts->Factors, "Chunk factors to try for each algorithm")
      ->delimiter(',')
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  Cmd->add_option("--min-bytes", Opts->MinBytes, "Smallest message measured")
      ->capture_default_str();
  Cmd->add_option("--max-bytes", Opts->MaxBytes,
                  "Largest message measured (sizes grow by 4 in between)")
      ->capture_default_str();
  Cmd->add_option("--iters", Opts->Iterations, "Timed calls per size and round")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  Cmd->add_option("--warmup", Opts->Warmup, "Untimed calls first")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  Cmd->add_option("--rounds", Opts->Rounds, "Times each candidate is measured (the median counts)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  Cmd->add_flag("--in-place", Opts->InPlace,
                "Measure calls whose output is their input (as torch.distributed's all_reduce)");
  Cmd->add_option("--registered", Opts->Registered,
                  "1: measure calls on buffers from cclcMemAlloc (cclc-perf -R 1), 0: on the heap")
      ->check(CLI::Range(0, 1))
      ->capture_default_str();
  Cmd->add_flag("--gpu", Opts->Gpu,
                "Measure calls on GPU buffers, which the GPU executors run (cclc-perf --gpu)");
  std::vector<std::string> Protocols;
  for (sched::Protocol P : plan::allProtocols())
    Protocols.emplace_back(plan::protocolName(P));
  Cmd->add_option("--protocols", Opts->Protocols,
                  "Protocols to measure each algorithm by (other than simple with --gpu only)")
      ->delimiter(',')
      ->check(CLI::IsMember(Protocols))
      ->capture_default_str();
  Cmd->add_option("--perf", Opts->Perf, "The cclc-perf that runs the plans (default: beside cclc)");
  Cmd->callback([Opts, &Common, &ExitCode] {
    if (Opts->Perf.empty())
      Opts->Perf = defaultPerf();
    SourceManager SM;
    DiagnosticEngine Diags(SM);
    configure(Diags, Common);
    ExitCode = Tuner(*Opts, Diags, SM).run() ? 0 : 1;
  });
}

} // namespace cclc::driver
