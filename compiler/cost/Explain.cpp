//===- Explain.cpp - What the cost model says, for people -----------------===//

#include "compiler/cost/Explain.h"
#include "plan/Assert.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace cclc::cost {

/// printf into a string: the tables are fixed-width columns.
template <typename... Args> static std::string format(const char *Fmt, Args... Values) {
  char Buf[256];
  std::snprintf(Buf, sizeof(Buf), Fmt, Values...);
  return Buf;
}

void printPredictions(const std::string &Algorithm, const std::string &Target,
                      const std::vector<Prediction> &Points, std::ostream &OS) {
  OS << "explain: " << Algorithm << " on " << Target << "\n";
  OS << format("%10s %12s %12s %12s %7s\n", "size", "time(us)", "algbw(GB/s)", "busbw(GB/s)",
               "chunks");
  for (const Prediction &P : Points)
    OS << format("%10s %12.2f %12.2f %12.2f %7d\n", plan::formatBytes(P.Bytes).c_str(), P.TimeUs,
                 P.AlgBwGBs, P.BusBwGBs, P.ChunkFactor);
}

/// Index of the fastest curve at size Point; ties go to the first listed.
static size_t fastestAt(const std::vector<AlgorithmCurve> &Curves, size_t Point) {
  size_t Best = 0;
  for (size_t C = 1; C < Curves.size(); ++C)
    if (Curves[C].Points[Point].TimeUs < Curves[Best].Points[Point].TimeUs)
      Best = C;
  return Best;
}

void printComparison(const std::vector<AlgorithmCurve> &Curves, std::ostream &OS) {
  CCLC_ASSERT(!Curves.empty(), "a comparison needs curves");
  size_t NPoints = Curves[0].Points.size();
  for (const AlgorithmCurve &C : Curves)
    CCLC_ASSERT(C.Points.size() == NPoints, "curves over different sizes");
  OS << "compare: time(us) per algorithm\n" << format("%10s", "size");
  for (const AlgorithmCurve &C : Curves)
    OS << " " << format("%*s", static_cast<int>(std::max<size_t>(C.Name.size(), 10)),
                        C.Name.c_str());
  OS << "  fastest\n";
  std::string Crossover;
  size_t Previous = Curves.size();
  for (size_t P = 0; P < NPoints; ++P) {
    OS << format("%10s", plan::formatBytes(Curves[0].Points[P].Bytes).c_str());
    for (const AlgorithmCurve &C : Curves)
      OS << " " << format("%*.2f", static_cast<int>(std::max<size_t>(C.Name.size(), 10)),
                          C.Points[P].TimeUs);
    size_t Fastest = fastestAt(Curves, P);
    OS << "  " << Curves[Fastest].Name << "\n";
    if (Fastest == Previous)
      continue;
    // A new segment: it ends the previous one ("below") and starts here.
    std::string Size = plan::formatBytes(Curves[Fastest].Points[P].Bytes);
    if (Previous != Curves.size())
      Crossover += " below " + Size + ", " + Curves[Fastest].Name + " from " + Size;
    else
      Crossover += Curves[Fastest].Name;
    Previous = Fastest;
  }
  OS << "crossover: " << Crossover << (Crossover.find(" from ") == std::string::npos
                                           ? " fastest at every size\n"
                                           : "\n");
}

std::string describeWindow(const SizeWindow &W) {
  if (W.MinBytes == 0 && !W.MaxBytes)
    return "at every size";
  std::string Text = W.MinBytes ? "from " + plan::formatBytes(W.MinBytes) : "";
  if (!W.MaxBytes)
    return Text + " up";
  return Text + (W.MinBytes ? " below " : "below ") + plan::formatBytes(*W.MaxBytes + 1);
}

std::optional<SizeWindow> fastestWindow(const std::vector<AlgorithmCurve> &Curves, size_t Index) {
  CCLC_ASSERT(Index < Curves.size(), "no such curve");
  const std::vector<Prediction> &Points = Curves[Index].Points;
  std::optional<size_t> First, Last;
  for (size_t P = 0; P < Points.size(); ++P)
    if (fastestAt(Curves, P) == Index) {
      First = First.value_or(P);
      Last = P;
    }
  if (!First)
    return std::nullopt;
  SizeWindow W;
  if (*First > 0)
    W.MinBytes = Points[*First].Bytes;
  if (*Last + 1 < Points.size())
    W.MaxBytes = Points[*Last + 1].Bytes - 1;
  return W;
}

} // namespace cclc::cost
