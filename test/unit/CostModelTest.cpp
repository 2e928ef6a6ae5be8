//===- CostModelTest.cpp - The alpha-beta simulation ----------------------===//

#include "LibrarySchedule.h"
#include "common/Protocol.h"
#include "compiler/cost/CostModel.h"
#include "compiler/passes/ChannelParallel.h"
#include "compiler/passes/Chunking.h"
#include "compiler/passes/ProtocolSelection.h"

#include <gtest/gtest.h>

using namespace cclc;
using namespace cclc::cost;
using namespace cclc::sched;
using namespace cclc::target;

namespace {

/// A broadcast relayed along ranks 0 -> 1 -> ... -> N-1, one whole-buffer
/// message per hop: N - 1 hops in sequence.
Schedule chain(int32_t N) {
  Schedule S;
  S.Algorithm = "chain";
  S.Collective = plan::CollectiveKind::Broadcast;
  S.NRanks = N;
  S.Units = bufferUnits(S.Collective, N);
  S.Remap.resize(N);
  S.Ranks.resize(N);
  Slice Whole{BufferKind::Output, 0, 1};
  for (int32_t R = 0; R < N; ++R) {
    S.Remap[R] = R;
    S.Ranks[R].LogicalRank = R;
    S.Ranks[R].Channels.resize(1);
    std::vector<Step> &Steps = S.Ranks[R].Channels[0].Steps;
    if (R > 0)
      Steps.push_back({OpKind::Recv, R - 1, -1, {}, Whole, false, {}, 0, {}, Protocol::Simple});
    if (R + 1 < N)
      Steps.push_back({OpKind::Send, R + 1, -1, Whole, {}, false, {}, 0, {}, Protocol::Simple});
  }
  return S;
}

constexpr uint64_t GiB = uint64_t(1) << 30;

TEST(CostModel, OneMessageIsAlphaPlusBytesOverBeta) {
  CostModel Model(flatTarget(2));
  double Bytes = 1 << 20;
  double Expected = LaunchLatencyUs + linkLatencyUs(DefaultLink.Type, sched::Protocol::Simple) +
                    Bytes / (DefaultLink.BwGBs * 1e3);
  EXPECT_NEAR(Model.simulate(chain(2), 1 << 20), Expected, 1e-9);
}

/// chain(N) with every message by P.
Schedule chainBy(int32_t N, Protocol P) {
  Schedule S = chain(N);
  for (RankProgram &Rank : S.Ranks)
    for (Step &St : Rank.Channels[0].Steps)
      St.Proto = P;
  return S;
}

// An LL message pays the protocol's low latency and moves its payload at
// half the link's bandwidth, up to the largest message the runtime sends by
// LL; a larger one goes by the simple protocol, as in the runtime.
TEST(CostModel, LLTradesBandwidthForLatencyUpToItsLargestMessage) {
  CostModel Model(flatTarget(2));
  const double Bw = DefaultLink.BwGBs * 1e3;
  const double LLAlpha = linkLatencyUs(DefaultLink.Type, Protocol::LL);
  const double SimpleAlpha = linkLatencyUs(DefaultLink.Type, Protocol::Simple);
  EXPECT_LT(LLAlpha, SimpleAlpha);
  const double Small = 1024;
  EXPECT_NEAR(Model.simulate(chainBy(2, Protocol::LL), 1024),
              LaunchLatencyUs + LLAlpha + Small / (Bw * bandwidthShare(Protocol::LL)), 1e-9);
  EXPECT_LT(Model.simulate(chainBy(2, Protocol::LL), 1024),
            Model.simulate(chainBy(2, Protocol::Simple), 1024));
  const uint64_t Large = kern::LLFormat.MaxBytes + 8;
  EXPECT_DOUBLE_EQ(Model.simulate(chainBy(2, Protocol::LL), Large),
                   Model.simulate(chainBy(2, Protocol::Simple), Large));
  // The predictions say which protocol the schedule sends by.
  EXPECT_EQ(Model.predict(chainBy(2, Protocol::LL), {1024})[0].Proto, Protocol::LL);
  EXPECT_EQ(Model.predict(chain(2), {1024})[0].Proto, Protocol::Simple);
}

// LL128 sits between LL and the simple protocol on NVLink: more latency than
// LL, 120/128 of the bandwidth. As in NCCL it serves NVLink and a GPU's own
// memory alone: over PCI its messages cost what the simple protocol's do.
TEST(CostModel, LL128ServesNVLinkAtMostOfTheBandwidth) {
  using topo::PathType;
  EXPECT_LT(linkLatencyUs(PathType::NVL, Protocol::LL),
            linkLatencyUs(PathType::NVL, Protocol::LL128));
  EXPECT_LT(linkLatencyUs(PathType::NVL, Protocol::LL128),
            linkLatencyUs(PathType::NVL, Protocol::Simple));
  EXPECT_DOUBLE_EQ(bandwidthShare(Protocol::LL128), 120.0 / 128.0);
  EXPECT_DOUBLE_EQ(bandwidthShare(Protocol::Simple), 1.0);
  EXPECT_EQ(protocolUsed(PathType::NVL, Protocol::LL128, 8192), Protocol::LL128);
  EXPECT_EQ(protocolUsed(PathType::LOC, Protocol::LL128, 8192), Protocol::LL128);
  EXPECT_EQ(protocolUsed(PathType::NVL, Protocol::LL128, double(kern::LL128Format.MaxBytes) + 8),
            Protocol::Simple);
  EXPECT_EQ(protocolUsed(PathType::PIX, Protocol::LL128, 8192), Protocol::Simple);
  EXPECT_EQ(protocolUsed(PathType::PIX, Protocol::LL, 2048), Protocol::LL);
  CostModel Model(flatTarget(2));
  EXPECT_DOUBLE_EQ(Model.simulate(chainBy(2, Protocol::LL128), 8192),
                   Model.simulate(chainBy(2, Protocol::Simple), 8192));
  EXPECT_EQ(Model.predict(chainBy(2, Protocol::LL128), {1024})[0].Proto, Protocol::LL128);
}

// On CPUs a message costs the host's latency and moves at its copy rate,
// whatever protocol the step names (host executors send the simple way), and
// a call costs the host's call latency, not a GPU launch.
TEST(CostModel, OnCpusAMessageIsTheHostsLatencyPlusItsCopy) {
  const CpuCosts Cpu;
  CostModel Model(cpuTarget(2));
  EXPECT_DOUBLE_EQ(Model.launchUs(), Cpu.CallUs);
  const double Bytes = 1 << 20;
  const double Expected = Cpu.CallUs + Cpu.MessageUs + Bytes / (Cpu.CopyGBs * 1e3);
  EXPECT_NEAR(Model.simulate(chain(2), 1 << 20), Expected, 1e-9);
  EXPECT_DOUBLE_EQ(Model.simulate(chainBy(2, Protocol::LL), 1024),
                   Model.simulate(chain(2), 1024));
  EXPECT_EQ(Model.links().link(0, 1).BwGBs, float(Cpu.CopyGBs));
  EXPECT_EQ(Model.links().rankName(1), "rank 1");
  EXPECT_EQ(cpuTarget(2).Description, "2 ranks on CPUs");
}

// A GPU reduces at its memory's speed, far above its links', so at 2 ranks
// the butterfly's one exchange of the whole buffer ties with
// halving-doubling's two of half of it at every size. A CPU reduces no
// faster than it copies: the butterfly, which reduces the whole buffer,
// loses from a few KiB on, and wins only where latency rules.
TEST(CostModel, OnCpusReductionsCostAndHalvingDoublingWinsLargeMessages) {
  Schedule Butterfly = test::librarySchedule("butterfly-allreduce", 2);
  Schedule HalvingDoubling = test::librarySchedule("halving-doubling-allreduce", 2);
  CostModel Gpu(flatTarget(2));
  EXPECT_NEAR(Gpu.simulate(Butterfly, 16 << 20), Gpu.simulate(HalvingDoubling, 16 << 20),
              0.01 * Gpu.simulate(Butterfly, 16 << 20));
  CostModel Cpu(cpuTarget(2));
  EXPECT_LT(Cpu.simulate(Butterfly, 64), Cpu.simulate(HalvingDoubling, 64));
  EXPECT_LT(1.15 * Cpu.simulate(HalvingDoubling, 1 << 20), Cpu.simulate(Butterfly, 1 << 20));
}

TEST(CostModel, TwiceTheBytesTakeTwiceTheTimeWhenLarge) {
  CostModel Model(flatTarget(4));
  double One = Model.simulate(chain(4), GiB);
  double Two = Model.simulate(chain(4), 2 * GiB);
  EXPECT_NEAR(Two / One, 2.0, 1e-3);
  // Small messages are latency: doubling them barely shows.
  EXPECT_LT(Model.simulate(chain(4), 128) / Model.simulate(chain(4), 64), 1.01);
}

TEST(CostModel, MoreHopsCostMoreLatency) {
  CostModel Model(flatTarget(8));
  double Alpha = linkLatencyUs(DefaultLink.Type, sched::Protocol::Simple);
  double Prev = Model.simulate(chain(2), 8);
  for (int32_t N = 3; N <= 8; ++N) {
    double Time = Model.simulate(chain(N), 8);
    EXPECT_NEAR(Time - Prev, Alpha, 1e-3) << N << " ranks";
    Prev = Time;
  }
}

TEST(CostModel, ChunkingPipelinesLongChainsOfLargeMessages) {
  CostModel Model(flatTarget(8));
  std::vector<Prediction> P = Model.predict(chain(8), {1 << 10, GiB});
  // Small: one chunk, nothing to pipeline. Large: the deepest pipeline, close
  // to one hop's transfer time instead of seven.
  EXPECT_EQ(P[0].ChunkFactor, 1);
  EXPECT_EQ(P[1].ChunkFactor, MaxChunkFactor);
  double OneHop = GiB / (DefaultLink.BwGBs * 1e3);
  EXPECT_LT(P[1].TimeUs, 1.2 * OneHop);
  EXPECT_GT(Model.simulate(chain(8), GiB), 6.9 * OneHop);
  // Broadcast's bus bandwidth is its algorithm bandwidth.
  EXPECT_DOUBLE_EQ(P[1].BusBwGBs, P[1].AlgBwGBs);
}

// predictEachFactor simulates every size in one run, each channel that
// repeats another once, the chunked steps in chunking's order without
// building the chunked schedule, and every protocol without a schedule per
// protocol: each of its figures must be what simulating the schedule that
// chunkSchedule and the protocol pass make gives at that size alone.
TEST(CostModel, EachFactorIsTheChunkedScheduleSimulated) {
  const std::vector<uint64_t> Sizes = {1 << 10, 1 << 16, 1 << 20, GiB};
  for (const char *Name : {"ring-allreduce", "tree-allreduce", "butterfly-allreduce",
                           "ring-allgather", "ring-broadcast"}) {
    Schedule S = test::librarySchedule(Name, 8);
    passes::parallelizeChannels(S, 4);
    CostModel Model(flatTarget(8));
    std::vector<std::vector<Prediction>> PerFactor = Model.predictEachFactor(S, Sizes);
    ASSERT_EQ(PerFactor.size(), 7u) << Name;
    std::vector<std::vector<Prediction>> PerVariant =
        Model.predictEachFactor(S, Sizes, plan::allProtocols());
    ASSERT_EQ(PerVariant.size(), 7u * plan::allProtocols().size()) << Name;
    PerVariant.insert(PerVariant.end(), PerFactor.begin(), PerFactor.end());
    for (const std::vector<Prediction> &Points : PerVariant) {
      Schedule Chunked = S;
      passes::chunkSchedule(Chunked, Points[0].ChunkFactor);
      passes::selectProtocol(Chunked, Points[0].Proto);
      for (size_t I = 0; I < Sizes.size(); ++I)
        EXPECT_EQ(Points[I].TimeUs, Model.simulate(Chunked, Sizes[I]))
            << Name << " factor " << Points[I].ChunkFactor << " by "
            << plan::protocolName(Points[I].Proto) << " at " << Sizes[I] << " bytes";
    }
  }
}

TEST(CostModel, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(busBwFactor(plan::CollectiveKind::AllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busBwFactor(plan::CollectiveKind::AllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busBwFactor(plan::CollectiveKind::ReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busBwFactor(plan::CollectiveKind::Broadcast, 8), 1.0);
}

TEST(CostModel, SizesArePowersOfFourFromOneKiBToOneGiB) {
  std::vector<uint64_t> Sizes = explainSizes();
  ASSERT_EQ(Sizes.size(), 11u);
  EXPECT_EQ(Sizes.front(), 1024u);
  EXPECT_EQ(Sizes.back(), GiB);
}

} // namespace
