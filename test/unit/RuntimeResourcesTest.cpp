//===- RuntimeResourcesTest.cpp - What jobs hold and where they listen ----===//
//
// A process that starts roots for jobs it does not join (the parent of
// forked ranks) keeps nothing of them once they are done, and jobs whose
// ranks all run on this host bind and reach loopback addresses only.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include <arpa/inet.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <sys/resource.h>

namespace cclc::test {
namespace {

/// The descriptors this process has open.
size_t openDescriptors() {
  size_t N = 0;
  for ([[maybe_unused]] const auto &Entry : std::filesystem::directory_iterator("/proc/self/fd"))
    ++N;
  return N;
}

/// This process's virtual size in kB, from /proc/self/status.
size_t virtualKiB() {
  std::ifstream Status("/proc/self/status");
  std::string Key;
  size_t Value = 0;
  while (Status >> Key) {
    if (Key == "VmSize:" && Status >> Value)
      return Value;
    Status.ignore(1 << 10, '\n');
  }
  return 0;
}

/// A job of one forked rank whose root runs in this process, which joins
/// no communicator: the fork pattern of the documentation.
void runOneRankJob() {
  runJob(1, [](cclcComm_t, int) {}, std::chrono::seconds(20));
}

} // namespace

TEST(Roots, FinishedRootsOfJobsThisProcessDoesNotJoinAreRemoved) {
  for (int I = 0; I < 3; ++I)
    runOneRankJob();
  size_t Fds = openDescriptors(), KiB = virtualKiB();
  for (int I = 0; I < 200; ++I)
    runOneRankJob();
  // A root left behind holds a socket and its thread's stack (8 MiB).
  EXPECT_LE(openDescriptors(), Fds + 2);
  EXPECT_LT(virtualKiB(), KiB + 64 * 1024) << "from " << KiB << " kB";
}

namespace {

/// The address of an endpoint as /proc/net/tcp{,6} writes it: hex digits,
/// 32-bit words in host order, then ':' and the port.
std::vector<uint8_t> addressBytes(const std::string &Endpoint) {
  std::string Hex = Endpoint.substr(0, Endpoint.find(':'));
  std::vector<uint8_t> Bytes;
  for (size_t Word = 0; Word + 8 <= Hex.size(); Word += 8) {
    uint32_t W = uint32_t(std::stoul(Hex.substr(Word, 8), nullptr, 16));
    for (int B = 0; B < 4; ++B)
      Bytes.push_back(uint8_t(W >> (8 * B)));
  }
  return Bytes;
}

/// "192.0.2.2" or "fd00::2".
std::string addressText(const std::vector<uint8_t> &Bytes) {
  char Text[INET6_ADDRSTRLEN] = "?";
  ::inet_ntop(Bytes.size() == 4 ? AF_INET : AF_INET6, Bytes.data(), Text, sizeof Text);
  return Text;
}

bool isLoopback(const std::vector<uint8_t> &Bytes) {
  if (Bytes.size() == 4)
    return Bytes[0] == 127;
  // ::1, or an IPv4 loopback address mapped into IPv6.
  std::vector<uint8_t> Mapped(10, 0);
  Mapped.insert(Mapped.end(), {0xff, 0xff});
  bool IsMapped = std::equal(Mapped.begin(), Mapped.end(), Bytes.begin());
  std::vector<uint8_t> One(16, 0);
  One[15] = 1;
  return Bytes == One || (IsMapped && Bytes[12] == 127);
}

/// The addresses of this process's TCP sockets that are not loopback
/// (both ends, save the peer of a listening socket); throws when the
/// process has fewer than AtLeast TCP sockets.
std::vector<std::string> nonLoopbackEndpoints(size_t AtLeast) {
  std::set<std::string> Inodes;
  for (const auto &Entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code Err;
    std::string Target = std::filesystem::read_symlink(Entry.path(), Err).string();
    if (Target.rfind("socket:[", 0) == 0)
      Inodes.insert(Target.substr(8, Target.size() - 9));
  }
  std::vector<std::string> Outside;
  size_t Found = 0;
  for (const char *Table : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
    std::ifstream In(Table);
    std::string Line;
    std::getline(In, Line);
    while (std::getline(In, Line)) {
      std::istringstream Fields(Line);
      std::string Slot, Local, Remote, State, Skip, Inode;
      Fields >> Slot >> Local >> Remote >> State;
      for (int I = 0; I < 5; ++I)
        Fields >> Skip;
      Fields >> Inode;
      if (!Inodes.count(Inode))
        continue;
      ++Found;
      std::vector<std::pair<std::string, std::string>> Ends{{"local ", Local}};
      // A listening socket (state 0A) has no peer.
      if (State != "0A")
        Ends.emplace_back("remote ", Remote);
      for (const auto &[Side, End] : Ends)
        if (!isLoopback(addressBytes(End)))
          Outside.push_back(Side + addressText(addressBytes(End)));
    }
  }
  expect(Found >= AtLeast, "found " + std::to_string(Found) + " TCP sockets of this process");
  return Outside;
}

} // namespace

/// Whatever interfaces the host has, a job of forked ranks listens and
/// connects on loopback: its bootstrap (every rank's listener, the ring and
/// the root) and its TCP links.
TEST(LocalJobs, BindAndReachLoopbackOnly) {
  ScopedEnv Unset("CCLC_SOCKET_IFNAME", std::nullopt);
  {
    ScopedEnv Tcp("CCLC_TRANSPORT", "tcp");
    constexpr int NRanks = 3;
    runJob(NRanks, [](cclcComm_t Comm, int Rank) {
      std::vector<float> Data(1 << 12, float(Rank));
      ok(cclcAllReduce(Data.data(), Data.data(), Data.size(), cclcFloat32, cclcSum, Comm, nullptr),
         "cclcAllReduce");
      expect(Data[0] == float(NRanks * (NRanks - 1) / 2), "the sum");
      // A listener, the two ring neighbours, and TCP links to both peers.
      std::vector<std::string> Outside = nonLoopbackEndpoints(5);
      std::string List;
      for (const std::string &E : Outside)
        List += " " + E;
      expect(Outside.empty(), "rank " + std::to_string(Rank) + " uses" + List);
    });
    // The root's listener, in this process.
    EXPECT_EQ(nonLoopbackEndpoints(1), std::vector<std::string>{});
  }
}

} // namespace cclc::test

namespace cclc::test {

/// When the parent of forked ranks runs out of descriptors midway, the
/// ranks started so far end at once and the error says what to change.
TEST(LocalJobs, AFailedPipeEndsTheRanksStartedAndSaysWhy) {
  std::vector<int> Status = net::test::forkRanks(1, [](int) {
    constexpr int NRanks = 16;
    // Enough descriptors for NRanks by the launcher's estimate, most of
    // them taken before it starts.
    rlim_t Limit = 2 * NRanks + 32;
    rlimit Files{Limit, Limit};
    expect(::setrlimit(RLIMIT_NOFILE, &Files) == 0, "an open-file limit");
    for (int Fd; (Fd = ::dup(0)) >= 0 && rlim_t(Fd) < Limit - NRanks;) {
    }
    auto Start = std::chrono::steady_clock::now();
    try {
      perf::runLocalRanks(NRanks, [](int, const cclcUniqueId &) { return 0; });
    } catch (const std::runtime_error &E) {
      std::string What = E.what();
      expect(What.find("pipe failed after starting") != std::string::npos &&
                 What.find("ulimit") != std::string::npos,
             "the error says what failed and what to change: " + What);
      expect(std::chrono::steady_clock::now() - Start < std::chrono::seconds(5),
             "the ranks started ended at once");
      return 0;
    }
    return 1;
  });
  EXPECT_TRUE(net::test::exitedWith(Status[0], 0));
}

} // namespace cclc::test
