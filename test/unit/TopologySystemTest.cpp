//===- TopologySystemTest.cpp - Topology XML reader, graph and paths ------===//

#include "TopologyTestUtil.h"
#include "compiler/topology/NcclEnv.h"
#include "compiler/topology/Paths.h"
#include "compiler/topology/Search.h"
#include "compiler/topology/SystemPrint.h"

#include <fstream>
#include <gtest/gtest.h>
#include <random>

using namespace cclc;
using namespace cclc::topo;
using namespace cclc::topo::test;

namespace {

System prepared(const std::string &Name, int NumNodes = 1) {
  auto L = loadFile(projectTopology(Name));
  EXPECT_TRUE(L->Sys) << L->text();
  System Sys = *L->Sys;
  prepareSystem(Sys, NumNodes);
  return Sys;
}

const Path &gpuPath(const System &Sys, int A, NodeType T, int B) {
  return Sys.path({NodeType::Gpu, A}, {T, B});
}

float linkBw(const System &Sys, NodeRef From, NodeType To, LinkType Type) {
  for (const Link &L : Sys.node(From).Links)
    if (L.Remote.Type == To && L.Type == Type)
      return L.Bw;
  return -1;
}

std::string readAll(const std::string &Path) {
  std::ifstream In(Path);
  return std::string(std::istreambuf_iterator<char>(In), {});
}

TEST(TopologySystem, EveryProjectTopologyLoadsOrFailsWithADiagnostic) {
  const std::map<std::string, int> Gpus = {{"azure-ncv4", 4},       {"dgx1-v100", 8},
                                           {"mesh8-broken-0-1", 8}, {"mesh8", 8},
                                           {"simai-hgx-8xa100", 8}, {"yccl-4xa6000", 4},
                                           {"yccl-h800", 8}};
  for (const std::string &Name : projectTopologies()) {
    auto L = loadFile(projectTopology(Name));
    auto It = Gpus.find(Name);
    if (It == Gpus.end()) {
      // The Azure ND files only describe the PCI tree; NCCL adds the GPUs at run time.
      EXPECT_FALSE(L->Sys) << Name;
      EXPECT_NE(L->text().find(":1:1: error: the topology has no GPU with a 'rank' attribute"),
                std::string::npos)
          << L->text();
      continue;
    }
    ASSERT_TRUE(L->Sys) << Name << ": " << L->text();
    EXPECT_EQ(L->Sys->count(NodeType::Gpu), It->second) << Name;
  }
}

TEST(TopologySystem, SharedCopiesAreTheProjectCopies) {
  if (sharedTopology("mesh8").empty())
    GTEST_SKIP() << "shared topologies not present";
  for (const std::string &Name : projectTopologies())
    EXPECT_EQ(readAll(sharedTopology(Name)), readAll(projectTopology(Name))) << Name;
}

TEST(TopologySystem, Yccl4xA6000MatchesNcclDump) {
  System Sys = prepared("yccl-4xa6000");
  std::ostringstream OS;
  printSystem(Sys, OS);
  std::string Text = OS.str();
  // Skylake QPI 10 GB/s, PCIe Gen3 x16 12 GB/s, NIC x4 3 GB/s; NETs trimmed for one node.
  EXPECT_EQ(Text.rfind("=== System : maxBw 12.0 totalBw 12.0 ===\nCPU/0-0 (1/1/2)\n", 0), 0u)
      << Text;
  EXPECT_NE(Text.find("+ PCI[12.0] - GPU/0-3b000 (0)\n"), std::string::npos);
  EXPECT_NE(Text.find("+ SYS[10.0] - CPU/0-1\n"), std::string::npos);
  EXPECT_NE(Text.find("+ PCI[3.0] - NIC/0-18000\n"), std::string::npos);
  EXPECT_EQ(Sys.count(NodeType::Net), 0);
  // No P2P across the host bridge: GPU0->GPU1 goes through the CPU (PHB).
  EXPECT_EQ(gpuPath(Sys, 0, NodeType::Gpu, 1).Type, PathType::PHB);
  EXPECT_EQ(gpuPath(Sys, 0, NodeType::Gpu, 1).count(), 2);
  EXPECT_FLOAT_EQ(gpuPath(Sys, 0, NodeType::Gpu, 2).Bw, 10.0f);
  EXPECT_EQ(gpuPath(Sys, 0, NodeType::Gpu, 2).Type, PathType::SYS);
  EXPECT_NE(Text.find("GPU/0-3b000 : GPU/0-3b000 (0/5000.0/LOC) GPU/0-5e000 (2/12.0/PHB) "
                      "GPU/0-b1000 (3/10.0/SYS)"),
            std::string::npos);
}

TEST(TopologySystem, BandwidthRules) {
  // Empty link_speed and width 0: NCCL's defaults, 16 x 60 / 80 = 12 GB/s.
  System Ncv4 = prepared("azure-ncv4", 2);
  NodeRef Gpu0{NodeType::Gpu, 0};
  EXPECT_FLOAT_EQ(linkBw(Ncv4, Gpu0, NodeType::Cpu, LinkType::Pci), 12.0f);
  EXPECT_FLOAT_EQ(linkBw(Ncv4, Gpu0, NodeType::Gpu, LinkType::Nvl), 240.0f); // 12 x sm80 20.
  EXPECT_FLOAT_EQ(linkBw(Ncv4, {NodeType::Cpu, 0}, NodeType::Cpu, LinkType::Sys), 16.0f); // AMD.
  EXPECT_FLOAT_EQ(Ncv4.nodes(NodeType::Net)[0].Net.Bw, 12.5f); // 100000 Mb/s / 8000.
  // sm90: 20.6 per link; Sapphire Rapids: 22; Gen5 x16: 48.
  System H800 = prepared("yccl-h800");
  EXPECT_FLOAT_EQ(linkBw(H800, Gpu0, NodeType::Nvs, LinkType::Nvl), 8 * 20.6f);
  EXPECT_FLOAT_EQ(linkBw(H800, {NodeType::Cpu, 0}, NodeType::Cpu, LinkType::Sys), 22.0f);
  EXPECT_FLOAT_EQ(linkBw(H800, Gpu0, NodeType::Pci, LinkType::Pci), 48.0f);
  // "16 GT/s" (old kernels) is Gen4: 24 GB/s at x16; six NVSwitches are one NVS node.
  System Simai = prepared("simai-hgx-8xa100");
  EXPECT_EQ(Simai.count(NodeType::Nvs), 1);
  EXPECT_FLOAT_EQ(linkBw(Simai, Gpu0, NodeType::Nvs, LinkType::Nvl), 240.0f);
  EXPECT_FLOAT_EQ(linkBw(Simai, Gpu0, NodeType::Pci, LinkType::Pci), 24.0f);
  EXPECT_FLOAT_EQ(Simai.MaxBw, 240.0f);
  // Broadwell QPI and sm70 NVLink.
  System Dgx1 = prepared("dgx1-v100");
  EXPECT_FLOAT_EQ(linkBw(Dgx1, {NodeType::Cpu, 0}, NodeType::Cpu, LinkType::Sys), 6.0f);
}

TEST(TopologySystem, BroadcomGen4SwitchesAreFlattened) {
  // mesh8: each Gen4 PEX switch is written as two levels; NCCL merges them.
  System Sys = prepared("mesh8");
  EXPECT_EQ(Sys.count(NodeType::Pci), 4);
  // GPU0 and its NIC then sit behind one switch: PIX, not PXB.
  System Two = prepared("mesh8", 2);
  EXPECT_EQ(gpuPath(Two, 0, NodeType::Net, 0).Type, PathType::PIX);
}

TEST(TopologySystem, BrokenLinkLeavesNvlinkPaths) {
  System Full = prepared("mesh8");
  System Broken = prepared("mesh8-broken-0-1");
  EXPECT_EQ(gpuPath(Full, 0, NodeType::Gpu, 1).Type, PathType::NVL);
  EXPECT_GT(gpuPath(Broken, 0, NodeType::Gpu, 1).Type, PathType::NVL);
  EXPECT_EQ(gpuPath(Broken, 0, NodeType::Gpu, 2).Type, PathType::NVL);
}

TEST(TopologySystem, PxnAndGdrPaths) {
  // H800: every GPU shares a Gen5 switch with its NIC (PIX, GPU Direct RDMA);
  // another GPU's NIC is reached through that GPU over NVLink (PXN).
  System Sys = prepared("yccl-h800", 2);
  EXPECT_EQ(gpuPath(Sys, 0, NodeType::Net, 0).Type, PathType::PIX);
  EXPECT_TRUE(gdrAllowed(Sys, 0, 0));
  EXPECT_EQ(gpuPath(Sys, 1, NodeType::Net, 0).Type, PathType::PXN);
  EXPECT_EQ(localGpu(Sys, 0), 0);
  // yccl-4xa6000: the NICs have gdr=0, so GPU->NET traffic bounces on the CPU.
  System Pcie = prepared("yccl-4xa6000", 2);
  EXPECT_FALSE(gdrAllowed(Pcie, 0, 0));
  EXPECT_GE(gpuPath(Pcie, 0, NodeType::Net, 0).Type, PathType::PHB);
}

TEST(TopologySystem, JsonAndDotDescribeTheMachine) {
  System Sys = prepared("azure-ncv4");
  nlohmann::json J = systemToJson(Sys);
  EXPECT_EQ(J["nodes"].size(), 9u); // 4 GPU, 4 CPU, 1 NIC (NET trimmed).
  EXPECT_FLOAT_EQ(J["maxBw"].get<float>(), 240.0f);
  EXPECT_EQ(J["nodes"][0]["name"], "GPU/0-100000");
  std::ostringstream Dot;
  writeDot(Sys, searchAll(Sys, 1), Dot);
  EXPECT_NE(Dot.str().find("GPU0 -- GPU1 [label=\"NVL 240.0\"]"), std::string::npos) << Dot.str();
  EXPECT_NE(Dot.str().find("color=red"), std::string::npos);
}

/// One bad file: the message and its line:column.
struct BadCase {
  const char *Text;
  const char *Expected;
};

constexpr const char *Cpu = "<system version=\"1\">\n"
                            "  <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\">\n";
constexpr const char *Gpu0 =
    "    <pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">\n"
    "      <gpu dev=\"0\" sm=\"80\" rank=\"0\" gdr=\"1\"/>\n"
    "    </pci>\n";
constexpr const char *End = "  </cpu>\n</system>\n";

std::string file(const std::string &Body) { return Cpu + std::string(Gpu0) + Body + End; }

TEST(TopologySystem, BadInputIsReportedWithItsLine) {
  const BadCase Cases[] = {
      {"<system><cpu numaid='0'", "topo.xml:1:23: error: malformed XML"},
      {"<graphs/>", "topo.xml:1:1: error: not an NCCL topology: the top element must be <system>"},
      {"<system version=\"1\"/>", "topo.xml:1:1: error: the topology has no GPU"},
      {nullptr, nullptr}};
  for (const BadCase &C : Cases) {
    if (!C.Text)
      break;
    auto L = loadText(C.Text);
    EXPECT_FALSE(L->Sys);
    EXPECT_NE(L->text().find(C.Expected), std::string::npos) << L->text();
  }
  const BadCase Bodies[] = {
      {"    <pci busid=\"0000:02:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">\n"
       "      <gpu sm=\"80\" rank=\"1\" gdr=\"1\"/>\n    </pci>\n",
       "topo.xml:7:7: error: <gpu> is missing required attribute 'dev'"},
      {"    <pci busid=\"0000:01:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">\n"
       "      <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\"/>\n    </pci>\n",
       "topo.xml:6:5: error: duplicate GPU bus id 1000"},
      {"    <pci busid=\"0000:02:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"-4\">\n"
       "      <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\"/>\n    </pci>\n",
       "topo.xml:6:5: error: attribute 'link_width' of <pci> is out of range: -4 (expected 0 to "
       "32)"},
      {"    <pci busid=\"0000:02:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">\n"
       "      <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\">\n"
       "        <nvlink target=\"0000:01:00.0\" count=\"99999\" tclass=\"0x030200\"/>\n"
       "      </gpu>\n    </pci>\n",
       "topo.xml:8:9: error: attribute 'count' of <nvlink> is out of range: 99999"},
      {"    <pci busid=\"0000:02:00.0\" class=\"0x030200\" link_speed=\"\" link_width=\"16\">\n"
       "      <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\">\n"
       "        <nvlink target=\"0000:01:00.0\" count=\"2\" tclass=\"0x030200\"/>\n"
       "      </gpu>\n    </pci>\n",
       "topo.xml:6:5: error: NVL link to GPU 1000 has no link back"},
      {"    <nic><net dev=\"0\" speed=\"1e99\"/></nic>\n",
       "topo.xml:6:10: error: attribute 'speed' of <net> must be an integer, got '1e99'"},
      {"    <pci busid=\"zz\" class=\"0x060400\" link_speed=\"\" link_width=\"16\"/>\n",
       "topo.xml:6:5: error: attribute 'busid' of <pci> is not a PCI bus id"},
  };
  for (const BadCase &C : Bodies) {
    auto L = loadText(file(C.Text));
    EXPECT_FALSE(L->Sys);
    EXPECT_NE(L->text().find(C.Expected), std::string::npos) << L->text();
  }
}

TEST(TopologySystem, UnreachableGpuIsAnError) {
  // Two hosts in one file: nothing joins their CPUs.
  std::string Text = file("") ;
  Text.insert(Text.find("</system>"),
               "  <cpu host_hash=\"0x2\" numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\">\n"
               "    <pci busid=\"0000:02:00.0\" class=\"0x030200\" link_speed=\"\" "
               "link_width=\"16\">\n"
               "      <gpu dev=\"1\" sm=\"80\" rank=\"1\" gdr=\"1\"/>\n    </pci>\n  </cpu>\n");
  auto L = loadText(Text);
  EXPECT_FALSE(L->Sys);
  EXPECT_NE(L->text().find("topo.xml:8:5: error: GPU rank 1 cannot reach GPU rank 0"),
            std::string::npos)
      << L->text();
}

TEST(TopologySystem, NcclSkipsAreKept) {
  // No rank: not part of the job. No dev: ignored. Unknown elements: ignored.
  auto L = loadText(file("    <pci busid=\"0000:02:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" "
                         "link_width=\"0\"><gpu dev=\"1\" sm=\"80\" gdr=\"1\"/></pci>\n"
                         "    <nic><net name=\"x\"/></nic>\n    <fancy/>\n"));
  ASSERT_TRUE(L->Sys) << L->text();
  EXPECT_EQ(L->Sys->count(NodeType::Gpu), 1);
  EXPECT_EQ(L->Sys->count(NodeType::Net), 0);
}

/// Applies one seeded random change to an XML text.
std::string mutate(std::string Text, std::mt19937 &Rng) {
  auto Pick = [&](size_t N) { return N ? std::uniform_int_distribution<size_t>(0, N - 1)(Rng) : 0; };
  std::vector<size_t> Opens;
  for (size_t P = Text.find('<'); P != std::string::npos; P = Text.find('<', P + 1))
    Opens.push_back(P);
  auto ElementAt = [&](size_t Start) {
    size_t EndPos = Text.find('>', Start);
    return EndPos == std::string::npos ? Text.size() - Start : EndPos + 1 - Start;
  };
  static const char *Values[] = {"-1", "0", "99999999999", "abc", "", "0x", "16 GT/s",
                                 "0000:01:00.0", "0x030200", "1e9", "2147483648", "-2147483649"};
  switch (Pick(6)) {
  case 0: { // Delete a tag.
    size_t S = Opens[Pick(Opens.size())];
    Text.erase(S, ElementAt(S));
    break;
  }
  case 1: { // Duplicate a tag.
    size_t S = Opens[Pick(Opens.size())];
    Text.insert(S, Text.substr(S, ElementAt(S)));
    break;
  }
  case 2: { // Swap two tags.
    size_t A = Opens[Pick(Opens.size())], B = Opens[Pick(Opens.size())];
    if (A > B)
      std::swap(A, B);
    size_t LA = ElementAt(A), LB = ElementAt(B);
    if (A + LA <= B) {
      std::string TA = Text.substr(A, LA), TB = Text.substr(B, LB);
      Text.replace(B, LB, TA);
      Text.replace(A, LA, TB);
    }
    break;
  }
  case 3: { // Corrupt an attribute value.
    size_t Q = Text.find("=\"", Pick(Text.size()));
    if (Q != std::string::npos) {
      size_t E = Text.find('"', Q + 2);
      if (E != std::string::npos)
        Text.replace(Q + 2, E - Q - 2, Values[Pick(std::size(Values))]);
    }
    break;
  }
  case 4: // Truncate.
    Text.resize(Pick(Text.size() + 1));
    break;
  default: // Flip a byte.
    if (!Text.empty())
      Text[Pick(Text.size())] = "<>/\"= x0"[Pick(8)];
  }
  return Text;
}

TEST(TopologySystem, MutatedTopologiesNeverCrash) {
  std::mt19937 Rng(20240611);
  int Accepted = 0, Rejected = 0;
  for (const std::string &Name : projectTopologies()) {
    std::string Original = readAll(projectTopology(Name));
    for (int I = 0; I < 220; ++I) {
      std::string Text = Original;
      int Changes = 1 + static_cast<int>(Rng() % 3);
      for (int C = 0; C < Changes; ++C)
        Text = mutate(Text, Rng);
      auto L = loadText(Text);
      L->Diags.setSilent(true);
      if (L->Sys) {
        // Searching every survivor would dominate the run time; one in eight suffices.
        if (Accepted++ % 8 == 0)
          searchAll(*L->Sys, 1 + static_cast<int>(Rng() % 2));
      } else {
        ++Rejected;
        EXPECT_GT(L->Diags.errorCount(), 0u) << "rejected without an error:\n" << Text;
      }
    }
  }
  EXPECT_GT(Accepted, 0);
  EXPECT_GT(Rejected, 0);
}

using EnvVars = std::map<std::string, std::string>;

/// readNcclEnv over a fixed environment, with its diagnostics.
struct EnvRead {
  SourceManager SM;
  std::ostringstream Out;
  DiagnosticEngine Diags{SM, Out};
  std::optional<NcclEnv> Env;
  EnvRead(const EnvVars &Vars, const NcclEnvOptions &Options = {}) {
    Env = readNcclEnv(Options, Diags, [&Vars](const char *Name) -> const char * {
      auto It = Vars.find(Name);
      return It == Vars.end() ? nullptr : It->second.c_str();
    });
  }
};

TEST(TopologyNcclEnv, LevelsParseAsNcclGetLevel) {
  EXPECT_EQ(parseLevel("PHB"), PathType::PHB);
  EXPECT_EQ(parseLevel("P2C"), PathType::P2C);
  EXPECT_EQ(parseLevel("0"), PathType::LOC);
  EXPECT_EQ(parseLevel("1"), PathType::PIX);
  EXPECT_EQ(parseLevel("2"), PathType::PXB);
  EXPECT_EQ(parseLevel("3"), PathType::PHB);
  EXPECT_EQ(parseLevel("4"), PathType::SYS);
  EXPECT_EQ(parseLevel("17"), PathType::SYS);
  EXPECT_EQ(parseLevel("NET"), std::nullopt); // Beyond SYS, as NCCL's table.
  EXPECT_EQ(parseLevel("phb"), std::nullopt); // NCCL compares with strcmp.
  EXPECT_EQ(parseLevel("-1"), std::nullopt);
  EXPECT_EQ(parseLevel("3x"), std::nullopt);
  EXPECT_EQ(parseLevel(""), std::nullopt);
}

TEST(TopologyNcclEnv, OptionsWinAndNewNamesWin) {
  EnvRead R(EnvVars{{"NCCL_P2P_LEVEL", "SYS"},
             {"NCCL_P2P_DISABLE", "1"},
             {"NCCL_MAX_NRINGS", "2"},
             {"NCCL_MAX_NCHANNELS", "4"},
             {"NCCL_CROSS_NIC", "1"}},
            NcclEnvOptions{"", true, "", "", "0", "", ""});
  ASSERT_TRUE(R.Env) << R.Out.str();
  EXPECT_EQ(R.Env->P2pLevel.Value, PathType::LOC); // NCCL_P2P_DISABLE=1 wins over the level.
  EXPECT_EQ(R.Env->P2pLevel.Source.Text, "NCCL_P2P_DISABLE=1");
  EXPECT_FALSE(R.Env->PeerAccess.Value);
  EXPECT_EQ(R.Env->MaxChannels.Value, 4);
  EXPECT_EQ(R.Env->CrossNic.Value, 0);
  EXPECT_EQ(R.Env->CrossNic.Source.Name, "--cross-nic");
  // NCCL_P2P_DISABLE other than 1 leaves the level to NCCL_P2P_LEVEL.
  EnvRead Zero(EnvVars{{"NCCL_P2P_LEVEL", "NVL"}, {"NCCL_P2P_DISABLE", "0"}});
  ASSERT_TRUE(Zero.Env);
  EXPECT_EQ(Zero.Env->P2pLevel.Value, PathType::NVL);
}

TEST(TopologyNcclEnv, EveryBadValueIsAnError) {
  EnvRead R(EnvVars{{"NCCL_P2P_LEVEL", "FAST"}, {"NCCL_SHM_DISABLE", "y"}, {"NCCL_CROSS_NIC", "5"}});
  EXPECT_FALSE(R.Env);
  EXPECT_EQ(R.Diags.errorCount(), 3u) << R.Out.str();
  EXPECT_NE(R.Out.str().find("NCCL_SHM_DISABLE: 'y'"), std::string::npos) << R.Out.str();
}

TEST(TopologyNcclEnv, P2pLevelDefaultFollowsTheCpu) {
  System Sys = prepared("azure-ncv4"); // AMD, but four GPUs.
  EXPECT_EQ(p2pLevel(Sys), PathType::PXB);
  Sys.Env.P2pLevel.Value = PathType::SYS;
  EXPECT_EQ(p2pLevel(Sys), PathType::SYS);
}

TEST(TopologyNcclEnv, NoPeerAccessRoutesThroughTheCpu) {
  auto L = loadFile(projectTopology("mesh8"));
  ASSERT_TRUE(L->Sys);
  System Sys = *L->Sys;
  computePaths(Sys);
  EXPECT_EQ(Sys.path({NodeType::Gpu, 0}, {NodeType::Gpu, 1}).Type, PathType::NVL);
  Sys.Env.PeerAccess.Value = false;
  Sys.Env.IgnoreDisabledP2p.Value = 1;
  computePaths(Sys);
  const Path &Routed = Sys.path({NodeType::Gpu, 0}, {NodeType::Gpu, 1});
  EXPECT_EQ(Routed.Type, PathType::PHB);
  bool ViaCpu = false;
  for (const LinkRef &Hop : Routed.Hops)
    ViaCpu |= Sys.link(Hop).Remote.Type == NodeType::Cpu;
  EXPECT_TRUE(ViaCpu);
  // Without NCCL_IGNORE_DISABLED_P2P, NVLink peers without peer access are refused.
  Sys.Env.IgnoreDisabledP2p.Value = 0;
  std::ostringstream Out;
  DiagnosticEngine Diags(L->SM, Out);
  EXPECT_FALSE(checkPeerAccess(Sys, Diags));
  EXPECT_NE(Out.str().find("NCCL_IGNORE_DISABLED_P2P=1"), std::string::npos);
}

} // namespace
