//===- Socket.h - Sockets with deadlines and authenticated accept -*- C++ -*-===//
//
// The socket layer under the bootstrap and the TCP transport. Every blocking
// call takes a Deadline: it polls in short slices until the deadline passes or
// an abort flag is raised, then throws NetError saying what it waited for and
// what to check, so that no rank hangs on a peer that died or never came.
//
// Every connection opens with a Hello that presents the job's secret. A
// Listener closes, and logs, connections that do not present it, without
// letting them delay the genuine ones: a stray or hostile client can neither
// join a job nor stop it. Messages are raw host-endian structs, as in NCCL:
// all ranks of a job run the same build on the same architecture.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <netinet/in.h>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/socket.h>
#include <vector>

namespace cclc::net {

/// A bootstrap or transport failure; the message says what to check.
class NetError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// An IPv4 or IPv6 address and port, of fixed size so that it can travel in
/// messages and in a UniqueId.
union SocketAddress {
  sockaddr Sa;
  sockaddr_in V4;
  sockaddr_in6 V6;

  SocketAddress();
  socklen_t length() const;
  uint16_t port() const;
  void setPort(uint16_t Port);
  /// "192.0.2.1:5000" or "[fd00::1]:5000".
  std::string str() const;
  /// Whether the address is this host's loopback (127.0.0.0/8 or ::1).
  bool isLoopback() const;

  /// A copy of the IPv4 or IPv6 address Sa.
  static SocketAddress from(const sockaddr *Sa);
  /// The address of Host (a name or a numeric address), first IPv4 then IPv6.
  static SocketAddress resolve(const std::string &Host, uint16_t Port);
  /// The wildcard address of Family.
  static SocketAddress any(int Family, uint16_t Port);
};

/// The interface the runtime's sockets bind to, chosen as NCCL does:
/// CCLC_SOCKET_IFNAME when set (comma-separated name prefixes; a leading '^'
/// excludes the listed ones, a leading '=' asks for exact names), else the
/// first interface that is up and neither loopback nor docker, else a docker
/// bridge, else loopback.
/// CCLC_SOCKET_FAMILY=AF_INET or AF_INET6 restricts the address family.
struct Interface {
  std::string Name;
  SocketAddress Addr;
};
Interface findInterface();

/// Bounds one blocking socket call: a time limit, and an abort flag that
/// stops it early when another thread gives up on the job.
class Deadline {
public:
  Deadline(std::chrono::milliseconds Timeout, const std::atomic<uint32_t> *Abort = nullptr);
  /// A deadline that only the abort flag ends.
  static Deadline forever(const std::atomic<uint32_t> *Abort);

  std::chrono::milliseconds timeout() const { return Timeout; }
  /// The milliseconds one poll() may wait: the time left, capped so that the
  /// abort flag is seen promptly. Throws NetError naming What when the
  /// deadline has passed or the abort flag is raised.
  int slice(const std::string &What) const;

private:
  std::chrono::steady_clock::time_point At;
  std::chrono::milliseconds Timeout;
  const std::atomic<uint32_t> *Abort;
};

/// An owned, nonblocking TCP socket.
class Socket {
public:
  Socket() = default;
  explicit Socket(int Fd) : Fd(Fd) {}
  Socket(Socket &&Other) noexcept : Fd(Other.Fd) { Other.Fd = -1; }
  Socket &operator=(Socket &&Other) noexcept;
  Socket(const Socket &) = delete;
  Socket &operator=(const Socket &) = delete;
  ~Socket() { close(); }

  int fd() const { return Fd; }
  explicit operator bool() const { return Fd >= 0; }
  void close();

  /// Listens on Bind; port 0 picks a free port.
  static Socket listen(const SocketAddress &Bind);
  /// Connects to To, retrying while nothing listens there yet (the peer may
  /// start later than this process).
  static Socket connect(const SocketAddress &To, const Deadline &D, const std::string &What);

  SocketAddress localAddress() const;
  SocketAddress peerAddress() const;

  void sendAll(const void *Data, size_t Bytes, const Deadline &D, const std::string &What);
  /// Throws NetError when the peer closes the connection first.
  void recvAll(void *Data, size_t Bytes, const Deadline &D, const std::string &What);

private:
  int Fd = -1;
};

/// Sends Bytes of Out on To while receiving Bytes into In from From, so that
/// a ring step cannot deadlock on full socket buffers.
void exchange(Socket &To, const void *Out, Socket &From, void *In, size_t Bytes, const Deadline &D,
              const std::string &What);

/// Logs to stderr that a connection from From was closed, and why.
void logRefusal(const SocketAddress &From, const std::string &Reason);

/// What a connection is for, as its Hello says.
enum class HelloKind : uint32_t {
  Register = 1, ///< A rank registering with the root.
  Ring,         ///< A rank reaching its successor in the bootstrap ring.
  Message,      ///< A point-to-point message stream of the bootstrap.
  Transport,    ///< A socket of the TCP transport.
};

/// The first bytes on every connection.
struct Hello {
  uint64_t Magic = 0;
  uint64_t Secret = 0;
  HelloKind Kind = HelloKind::Register;
  int32_t Rank = -1;
  int32_t NRanks = 0;
  uint32_t Tag = 0;

  static Hello make(uint64_t Secret, HelloKind Kind, int Rank, int NRanks, uint32_t Tag);
};

/// Connects to To and presents H.
Socket connectWithHello(const SocketAddress &To, const Hello &H, const Deadline &D,
                        const std::string &What);

/// How long a connection may take to present its Hello. Genuine ranks send
/// it with the connection, so a short limit costs them nothing and keeps
/// silent clients from holding descriptors.
constexpr std::chrono::milliseconds HelloTimeout{2000};
/// How many accepted connections may wait to present their Hello at once;
/// when more arrive, the one that waited longest is closed.
constexpr size_t MaxPendingHellos = 128;

/// A listening socket that hands out only connections presenting the secret.
/// A flood of connections that present nothing cannot stop it: each is
/// closed after HelloTimeout (or the deadline's timeout, when shorter), at
/// most MaxPendingHellos wait at once, and running out of descriptors
/// closes the oldest of them rather than failing.
class Listener {
public:
  explicit Listener(const SocketAddress &Bind);

  const SocketAddress &address() const { return Addr; }

  struct Accepted {
    Socket S;
    SocketAddress From;
    Hello H;
  };
  /// Returns the next connection whose Hello presents Secret. Connections that
  /// present another secret, close early, or stay silent past the Hello's
  /// limit are closed and logged to stderr with their address.
  Accepted accept(uint64_t Secret, const Deadline &D, const std::string &What);

private:
  /// An accepted connection whose Hello has not fully arrived.
  struct Pending {
    Socket S;
    SocketAddress From;
    Hello H;
    size_t Got = 0;
    std::chrono::steady_clock::time_point Since;
  };
  Socket S;
  SocketAddress Addr;
  std::vector<Pending> Waiting;

  /// Accepts the connections the backlog holds, up to MaxPendingHellos
  /// waiting, closing the oldest waiting ones to make room. False when the
  /// process has no descriptor left and none waits to be closed.
  bool acceptWaiting();
  /// Closes the connection that has waited longest for its Hello.
  void dropOldest(const std::string &Reason);
  /// Reads what each waiting connection sent, closing those that failed,
  /// presented another secret or stayed silent past Limit; the first one
  /// that presented Secret, if any.
  std::optional<Accepted> takeReady(uint64_t Secret, std::chrono::milliseconds Limit);
  /// Reads what P's Hello has sent; true once complete. Throws NetError
  /// (with the reason to log) when P closed or failed.
  static bool readHello(Pending &P);
};

} // namespace cclc::net
