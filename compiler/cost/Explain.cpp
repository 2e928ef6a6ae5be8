//===- Explain.cpp - What the cost model says, for people -----------------===//

#include "compiler/cost/Explain.h"
#include "plan/Assert.h"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <tuple>
#include <utility>

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
  OS << format("%10s %12s %12s %12s %7s %9s\n", "size", "time(us)", "algbw(GB/s)",
               "busbw(GB/s)", "chunks", "protocol");
  for (const Prediction &P : Points)
    OS << format("%10s %12.2f %12.2f %12.2f %7d %9s\n", plan::formatBytes(P.Bytes).c_str(),
                 P.TimeUs, P.AlgBwGBs, P.BusBwGBs, P.ChunkFactor,
                 std::string(plan::protocolName(P.Proto)).c_str());
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

bool inWindow(const SizeWindow &W, uint64_t Bytes) {
  return Bytes >= W.MinBytes && (!W.MaxBytes || Bytes <= *W.MaxBytes);
}

/// Each variant's worst time over the fastest variant's at the sizes in W.
static std::vector<double> worstSlowdowns(const std::vector<Variant> &Variants,
                                          const SizeWindow &W) {
  CCLC_ASSERT(!Variants.empty(), "a choice needs variants");
  std::vector<double> Worst(Variants.size(), 1.0);
  for (size_t P = 0; P < Variants[0].Points.size(); ++P) {
    if (!inWindow(W, Variants[0].Points[P].Bytes))
      continue;
    double Best = Variants[0].Points[P].TimeUs;
    for (const Variant &V : Variants)
      Best = std::min(Best, V.Points[P].TimeUs);
    for (size_t V = 0; V < Variants.size(); ++V)
      Worst[V] = std::max(Worst[V], Variants[V].Points[P].TimeUs / Best);
  }
  return Worst;
}

size_t chooseVariant(const std::vector<Variant> &Variants, const SizeWindow &W) {
  std::vector<double> Worst = worstSlowdowns(Variants, W);
  double Least = *std::min_element(Worst.begin(), Worst.end());
  size_t Chosen = Variants.size();
  for (size_t V = 0; V < Variants.size(); ++V) {
    if (Worst[V] > Least * 1.01)
      continue;
    if (Chosen == Variants.size() ||
        std::tie(Variants[V].Channels, Variants[V].ChunkFactor, Variants[V].Proto) <
            std::tie(Variants[Chosen].Channels, Variants[Chosen].ChunkFactor,
                     Variants[Chosen].Proto))
      Chosen = V;
  }
  return Chosen;
}

void printVariants(const std::vector<Variant> &Variants, size_t Chosen, const SizeWindow &W,
                   std::ostream &OS) {
  std::vector<double> Worst = worstSlowdowns(Variants, W);
  std::vector<std::pair<int32_t, sched::Protocol>> Rows;
  std::vector<int32_t> Factors;
  for (const Variant &V : Variants) {
    if (std::find(Rows.begin(), Rows.end(), std::pair(V.Channels, V.Proto)) == Rows.end())
      Rows.emplace_back(V.Channels, V.Proto);
    if (std::find(Factors.begin(), Factors.end(), V.ChunkFactor) == Factors.end())
      Factors.push_back(V.ChunkFactor);
  }
  OS << "variants: worst time over the fastest variant, " << describeWindow(W) << "\n"
     << format("%10s %8s", "channels", "protocol");
  for (int32_t F : Factors)
    OS << format(" %9s", ("chunks=" + std::to_string(F)).c_str());
  OS << "\n";
  for (auto [C, Proto] : Rows) {
    OS << format("%10d %8s", C, std::string(plan::protocolName(Proto)).c_str());
    for (int32_t F : Factors) {
      auto It = std::find_if(Variants.begin(), Variants.end(), [&](const Variant &V) {
        return V.Channels == C && V.ChunkFactor == F && V.Proto == Proto;
      });
      OS << (It == Variants.end()
                 ? format(" %9s", "-")
                 : format(" %8.2fx", Worst[size_t(It - Variants.begin())]));
    }
    OS << "\n";
  }
  const Variant &V = Variants[Chosen];
  OS << "choice: " << V.Channels << (V.Channels == 1 ? " channel" : " channels")
     << ", chunk factor " << V.ChunkFactor << ", " << plan::protocolName(V.Proto)
     << " protocol\n";
}

} // namespace cclc::cost
