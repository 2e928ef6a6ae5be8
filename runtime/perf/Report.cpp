//===- Report.cpp - nccl-tests' output ------------------------------------===//

#include "runtime/perf/Report.h"

namespace cclc::perf {

void Report::header(const std::vector<RankInfo> &Ranks) {
  bool Factor = Opts.StepFactor > 1;
  std::fprintf(Out,
               "# nThread 1 nGpus %d minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %d "
               "iters: %d agg iters: 1 validation: %d graph: %d\n#\n# Using devices\n",
               Opts.Gpu ? 1 : 0, static_cast<unsigned long long>(Opts.MinBytes),
               static_cast<unsigned long long>(Opts.MaxBytes),
               static_cast<unsigned long long>(Factor ? Opts.StepFactor : Opts.StepBytes),
               Factor ? "factor" : "bytes", Opts.Warmup, Opts.Iters, Opts.Check ? 1 : 0,
               Opts.GraphLaunches);
  for (size_t R = 0; R < Ranks.size(); ++R)
    std::fprintf(Out, "#  Rank %2zu Group  0 Pid %6d on %10s device %s\n", R, Ranks[R].Pid,
                 Ranks[R].Host.c_str(), Ranks[R].Device.c_str());
  for (const std::string &Plan : Opts.Plans)
    std::fprintf(Out, "#  Plan %s\n", Plan.c_str());
  for (const std::string &Kernels : Opts.Kernels)
    std::fprintf(Out, "#  Kernels %s\n", Kernels.c_str());
}

void Report::columns(const Call &C) {
  std::fprintf(Out, "#\n# Collective: %s\n", callLabel(C));
  std::fprintf(Out,
               "# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
               "in-place          \n",
               "", "", "", "", "");
  std::fprintf(Out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size",
               "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
               "algbw", "busbw", "#wrong");
  std::fprintf(Out, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)",
               "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
               "");
}

void Report::cell(double AlgBytes, double Factor, const Measurement &M) {
  double Us = M.Seconds * 1e6;
  char Time[32];
  std::snprintf(Time, sizeof Time, Us >= 10000 ? "%7.0f" : Us >= 100 ? "%7.1f" : "%7.2f", Us);
  double AlgBw = M.Seconds > 0 ? AlgBytes / 1e9 / M.Seconds : 0;
  double BusBw = AlgBw * Factor;
  char WrongText[32] = "  N/A";
  if (M.Wrong) {
    std::snprintf(WrongText, sizeof WrongText, "%5llu", static_cast<unsigned long long>(*M.Wrong));
    Wrong += *M.Wrong;
  }
  std::fprintf(Out, "  %7s  %6.2f  %6.2f  %5s", Time, AlgBw, BusBw, WrongText);
  BusBandwidthSum += BusBw;
  ++Cells;
}

void Report::row(const Call &C, int NRanks, uint64_t Bytes, uint64_t Count,
                 const Measurement &OutOfPlace, const Measurement &InPlace) {
  std::fprintf(Out, "%12llu  %12llu  %8s  %6s  %6d", static_cast<unsigned long long>(Bytes),
               static_cast<unsigned long long>(Count), typeLabel(C.Type),
               reduces(C) ? opLabel(C.Op) : "none", hasRoot(C) ? C.Root : -1);
  double Factor = busBwFactor(C, NRanks);
  cell(double(Bytes), Factor, OutOfPlace);
  cell(double(Bytes), Factor, InPlace);
  std::fprintf(Out, "\n");
  std::fflush(Out);
}

void Report::footer() {
  std::fprintf(Out, "# Out of bounds values : %llu %s\n", static_cast<unsigned long long>(Wrong),
               Wrong ? "FAILED" : "OK");
  std::fprintf(Out, "# Avg bus bandwidth    : %g \n#\n", Cells ? BusBandwidthSum / Cells : 0.0);
  std::fflush(Out);
}

} // namespace cclc::perf
