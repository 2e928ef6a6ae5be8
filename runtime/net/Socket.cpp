//===- Socket.cpp - Sockets with deadlines and authenticated accept -------===//

#include "runtime/net/Socket.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace cclc::net {

namespace {

/// "cclcnet" and a protocol version: tells our connections from strangers'.
constexpr uint64_t HelloMagic = 0x01'74'65'6e'63'6c'63'63ull;

/// The longest single poll(), so that abort flags are seen promptly.
constexpr int MaxSliceMs = 100;

/// How long a listener that ran out of descriptors waits before it tries to
/// accept again.
constexpr int DescriptorRetryMs = 20;

std::string errnoText(int Err) { return std::strerror(Err); }

/// Sends what it can of [Data, Data + Left) without blocking; true when
/// something went out. Throws NetError when the connection failed.
bool sendSome(Socket &S, const std::byte *&Data, size_t &Left, const std::string &What) {
  ssize_t N = ::send(S.fd(), Data, Left, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (N > 0) {
    Data += N;
    Left -= size_t(N);
    return true;
  }
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
    return false;
  throw NetError("lost the connection to " + S.peerAddress().str() + " while trying to " + What +
                 ": " + errnoText(errno) + "; the peer may have died");
}

/// The receiving counterpart of sendSome; the peer closing first is an error.
bool recvSome(Socket &S, std::byte *&Data, size_t &Left, const std::string &What) {
  ssize_t N = ::recv(S.fd(), Data, Left, MSG_DONTWAIT);
  if (N > 0) {
    Data += N;
    Left -= size_t(N);
    return true;
  }
  if (N < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return false;
  std::string Cause = N == 0 ? "the peer closed the connection" : errnoText(errno);
  throw NetError("lost the connection to " + S.peerAddress().str() + " while waiting to " + What +
                 " (" + Cause + "); the peer may have died or given up");
}

int pollOrThrow(pollfd *Fds, nfds_t N, int Ms) {
  int R = ::poll(Fds, N, Ms);
  if (R < 0 && errno != EINTR)
    throw NetError("poll failed: " + errnoText(errno));
  return R;
}

/// Waits until Fd has one of Events; throws as Deadline::slice does.
void waitFor(int Fd, short Events, const Deadline &D, const std::string &What) {
  for (;;) {
    pollfd P{Fd, Events, 0};
    if (pollOrThrow(&P, 1, D.slice(What)) > 0)
      return;
  }
}

void setNoDelay(int Fd) {
  int One = 1;
  ::setsockopt(Fd, IPPROTO_TCP, TCP_NODELAY, &One, sizeof One);
}

} // namespace

//===----------------------------------------------------------------------===//
// Addresses and interfaces
//===----------------------------------------------------------------------===//

SocketAddress::SocketAddress() { std::memset(this, 0, sizeof *this); }

socklen_t SocketAddress::length() const {
  return Sa.sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

uint16_t SocketAddress::port() const {
  return ntohs(Sa.sa_family == AF_INET6 ? V6.sin6_port : V4.sin_port);
}

void SocketAddress::setPort(uint16_t Port) {
  if (Sa.sa_family == AF_INET6)
    V6.sin6_port = htons(Port);
  else
    V4.sin_port = htons(Port);
}

std::string SocketAddress::str() const {
  char Host[INET6_ADDRSTRLEN] = "?";
  if (Sa.sa_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &V6.sin6_addr, Host, sizeof Host);
    return "[" + std::string(Host) + "]:" + std::to_string(port());
  }
  if (Sa.sa_family == AF_INET) {
    ::inet_ntop(AF_INET, &V4.sin_addr, Host, sizeof Host);
    return std::string(Host) + ":" + std::to_string(port());
  }
  return "an unknown address";
}

bool SocketAddress::isLoopback() const {
  if (Sa.sa_family == AF_INET6)
    return IN6_IS_ADDR_LOOPBACK(&V6.sin6_addr);
  return Sa.sa_family == AF_INET && (ntohl(V4.sin_addr.s_addr) >> 24) == 127;
}

SocketAddress SocketAddress::from(const sockaddr *Sa) {
  SocketAddress Addr;
  if (Sa->sa_family == AF_INET6)
    Addr.V6 = *reinterpret_cast<const sockaddr_in6 *>(Sa);
  else
    Addr.V4 = *reinterpret_cast<const sockaddr_in *>(Sa);
  return Addr;
}

SocketAddress SocketAddress::resolve(const std::string &Host, uint16_t Port) {
  addrinfo Hints{};
  Hints.ai_family = AF_UNSPEC;
  Hints.ai_socktype = SOCK_STREAM;
  addrinfo *List = nullptr;
  if (int Err = ::getaddrinfo(Host.c_str(), nullptr, &Hints, &List))
    throw NetError("cannot resolve the host '" + Host + "': " + ::gai_strerror(Err));
  const addrinfo *Pick = nullptr;
  for (const addrinfo *A = List; A; A = A->ai_next)
    if ((A->ai_family == AF_INET || A->ai_family == AF_INET6) &&
        (!Pick || (Pick->ai_family == AF_INET6 && A->ai_family == AF_INET)))
      Pick = A;
  SocketAddress Addr;
  if (Pick)
    Addr = from(Pick->ai_addr);
  ::freeaddrinfo(List);
  if (!Pick)
    throw NetError("the host '" + Host + "' has no IPv4 or IPv6 address");
  Addr.setPort(Port);
  return Addr;
}

SocketAddress SocketAddress::any(int Family, uint16_t Port) {
  SocketAddress Addr;
  Addr.Sa.sa_family = sa_family_t(Family);
  if (Family == AF_INET6)
    Addr.V6.sin6_addr = in6addr_any;
  else
    Addr.V4.sin_addr.s_addr = htonl(INADDR_ANY);
  Addr.setPort(Port);
  return Addr;
}

namespace {

/// Whether Name matches the CCLC_SOCKET_IFNAME list Names (prefixes, or
/// exact names when Exact).
bool matchesList(const std::string &Name, const std::string &Names, bool Exact) {
  std::stringstream SS(Names);
  std::string Item;
  while (std::getline(SS, Item, ','))
    if (!Item.empty() && (Exact ? Name == Item : Name.compare(0, Item.size(), Item) == 0))
      return true;
  return false;
}

/// CCLC_SOCKET_FAMILY (AF_INET or AF_INET6) restricts the addresses used;
/// AF_UNSPEC when unset.
int socketFamily() {
  const char *Env = std::getenv("CCLC_SOCKET_FAMILY");
  if (!Env || !*Env)
    return AF_UNSPEC;
  if (std::strcmp(Env, "AF_INET") == 0)
    return AF_INET;
  if (std::strcmp(Env, "AF_INET6") == 0)
    return AF_INET6;
  throw NetError(std::string("CCLC_SOCKET_FAMILY=") + Env + " is neither AF_INET nor AF_INET6");
}

bool usableAddress(const ifaddrs *I, int Family) {
  if (!I->ifa_addr || !(I->ifa_flags & IFF_UP) ||
      (Family != AF_UNSPEC && I->ifa_addr->sa_family != Family))
    return false;
  if (I->ifa_addr->sa_family == AF_INET)
    return true;
  // Link-local IPv6 addresses need a scope id that other hosts cannot use.
  return I->ifa_addr->sa_family == AF_INET6 &&
         !IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6 *>(I->ifa_addr)->sin6_addr);
}

} // namespace

Interface findInterface() {
  int Family = socketFamily();
  ifaddrs *List = nullptr;
  if (::getifaddrs(&List) != 0)
    throw NetError("cannot list the network interfaces: " + errnoText(errno));
  const char *Env = std::getenv("CCLC_SOCKET_IFNAME");
  std::string Spec = Env ? Env : "";
  bool Exclude = !Spec.empty() && Spec[0] == '^';
  if (Exclude)
    Spec.erase(0, 1);
  bool Exact = !Spec.empty() && Spec[0] == '=';
  if (Exact)
    Spec.erase(0, 1);

  // Without a setting, prefer real interfaces, then docker bridges, then loopback.
  auto Preference = [](const ifaddrs *I) {
    if (I->ifa_flags & IFF_LOOPBACK)
      return 2;
    return std::string(I->ifa_name).rfind("docker", 0) == 0 ? 1 : 0;
  };
  const ifaddrs *Best = nullptr;
  std::string UpNames;
  for (const ifaddrs *I = List; I; I = I->ifa_next) {
    if (!usableAddress(I, Family))
      continue;
    if (UpNames.find(std::string(" ") + I->ifa_name + ",") == std::string::npos)
      UpNames += std::string(" ") + I->ifa_name + ",";
    if (Env && *Env) {
      if (matchesList(I->ifa_name, Spec, Exact) != Exclude && !Best)
        Best = I;
    } else if (!Best || Preference(I) < Preference(Best)) {
      Best = I;
    }
  }
  Interface Found;
  if (Best) {
    Found.Name = Best->ifa_name;
    Found.Addr = SocketAddress::from(Best->ifa_addr);
    Found.Addr.setPort(0);
  }
  ::freeifaddrs(List);
  if (!Best) {
    if (!UpNames.empty())
      UpNames.pop_back();
    std::string OfFamily = Family == AF_UNSPEC ? "" : " with an address of CCLC_SOCKET_FAMILY";
    if (Env && *Env)
      throw NetError("no interface that is up matches CCLC_SOCKET_IFNAME=" + std::string(Env) +
                     "; the interfaces that are up" + OfFamily + " are" + UpNames);
    throw NetError("no network interface is up" + OfFamily);
  }
  return Found;
}

//===----------------------------------------------------------------------===//
// Deadlines
//===----------------------------------------------------------------------===//

Deadline::Deadline(std::chrono::milliseconds Timeout, const std::atomic<uint32_t> *Abort)
    : At(std::chrono::steady_clock::now() + Timeout), Timeout(Timeout), Abort(Abort) {}

Deadline Deadline::forever(const std::atomic<uint32_t> *Abort) {
  Deadline D(std::chrono::milliseconds::zero(), Abort);
  D.At = std::chrono::steady_clock::time_point::max();
  D.Timeout = std::chrono::milliseconds::max();
  return D;
}

int Deadline::slice(const std::string &What) const {
  if (Abort && Abort->load(std::memory_order_relaxed))
    throw NetError("aborted while waiting to " + What);
  auto Left = At - std::chrono::steady_clock::now();
  if (Left <= std::chrono::steady_clock::duration::zero())
    throw NetError("timed out after " + std::to_string(Timeout.count()) + " ms waiting to " + What +
                   "; check that every rank is running and was given the same id and rank "
                   "count, and that CCLC_SOCKET_IFNAME names an interface on which the ranks "
                   "reach each other");
  auto Ms = std::chrono::ceil<std::chrono::milliseconds>(Left).count();
  return int(std::min<decltype(Ms)>(Ms, MaxSliceMs));
}

//===----------------------------------------------------------------------===//
// Sockets
//===----------------------------------------------------------------------===//

Socket &Socket::operator=(Socket &&Other) noexcept {
  if (this != &Other) {
    close();
    Fd = Other.Fd;
    Other.Fd = -1;
  }
  return *this;
}

void Socket::close() {
  if (Fd >= 0)
    ::close(Fd);
  Fd = -1;
}

Socket Socket::listen(const SocketAddress &Bind) {
  Socket S(::socket(Bind.Sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!S)
    throw NetError("cannot create a socket: " + errnoText(errno));
  // A well-known port must be reusable right after the previous job ended.
  int One = 1;
  ::setsockopt(S.Fd, SOL_SOCKET, SO_REUSEADDR, &One, sizeof One);
  if (::bind(S.Fd, &Bind.Sa, Bind.length()) != 0)
    throw NetError("cannot listen on " + Bind.str() + ": " + errnoText(errno) +
                   (errno == EADDRINUSE ? "; another process uses the port"
                                        : "; choose an interface with CCLC_SOCKET_IFNAME"));
  if (::listen(S.Fd, SOMAXCONN) != 0)
    throw NetError("cannot listen on " + Bind.str() + ": " + errnoText(errno));
  return S;
}

Socket Socket::connect(const SocketAddress &To, const Deadline &D, const std::string &What) {
  for (;;) {
    Socket S(::socket(To.Sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!S)
      throw NetError("cannot create a socket: " + errnoText(errno));
    setNoDelay(S.Fd);
    int Err = 0;
    if (::connect(S.Fd, &To.Sa, To.length()) != 0) {
      Err = errno;
      if (Err == EINPROGRESS) {
        waitFor(S.Fd, POLLOUT, D, What);
        socklen_t Len = sizeof Err;
        ::getsockopt(S.Fd, SOL_SOCKET, SO_ERROR, &Err, &Len);
      }
    }
    // A connect to a local port that nothing listens on yet may be given
    // that port as its own and connect the socket to itself (TCP's
    // simultaneous open); it then holds the port the listener is about to
    // bind. Such a socket is closed and the connect tried again.
    if (Err == 0 && S.localAddress().str() == S.peerAddress().str())
      Err = ECONNREFUSED;
    else if (Err == 0)
      return S;
    // Nothing listens yet, or the listener's backlog is full: try again.
    if (Err != ECONNREFUSED && Err != ETIMEDOUT && Err != EAGAIN && Err != ECONNRESET)
      throw NetError("cannot connect to " + To.str() + " to " + What + ": " + errnoText(Err));
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(D.slice(What), 20)));
  }
}

SocketAddress Socket::localAddress() const {
  SocketAddress Addr;
  socklen_t Len = sizeof Addr;
  ::getsockname(Fd, &Addr.Sa, &Len);
  return Addr;
}

SocketAddress Socket::peerAddress() const {
  SocketAddress Addr;
  socklen_t Len = sizeof Addr;
  ::getpeername(Fd, &Addr.Sa, &Len);
  return Addr;
}

void Socket::sendAll(const void *Data, size_t Bytes, const Deadline &D, const std::string &What) {
  auto *P = static_cast<const std::byte *>(Data);
  while (Bytes)
    if (!sendSome(*this, P, Bytes, What))
      waitFor(Fd, POLLOUT, D, What);
}

void Socket::recvAll(void *Data, size_t Bytes, const Deadline &D, const std::string &What) {
  auto *P = static_cast<std::byte *>(Data);
  while (Bytes)
    if (!recvSome(*this, P, Bytes, What))
      waitFor(Fd, POLLIN, D, What);
}

void exchange(Socket &To, const void *Out, Socket &From, void *In, size_t Bytes, const Deadline &D,
              const std::string &What) {
  auto *OutP = static_cast<const std::byte *>(Out);
  auto *InP = static_cast<std::byte *>(In);
  size_t OutLeft = Bytes, InLeft = Bytes;
  while (OutLeft || InLeft) {
    bool Progress = (OutLeft && sendSome(To, OutP, OutLeft, What)) |
                    (InLeft && recvSome(From, InP, InLeft, What));
    if (Progress)
      continue;
    pollfd P[2];
    nfds_t N = 0;
    if (OutLeft)
      P[N++] = {To.fd(), POLLOUT, 0};
    if (InLeft)
      P[N++] = {From.fd(), POLLIN, 0};
    pollOrThrow(P, N, D.slice(What));
  }
}

//===----------------------------------------------------------------------===//
// Greetings and the listener
//===----------------------------------------------------------------------===//

void logRefusal(const SocketAddress &From, const std::string &Reason) {
  // One write per line, so that lines of concurrent ranks do not interleave.
  std::string Line = "cclc: refused a connection from " + From.str() + ": " + Reason + "\n";
  std::fputs(Line.c_str(), stderr);
}

Hello Hello::make(uint64_t Secret, HelloKind Kind, int Rank, int NRanks, uint32_t Tag) {
  Hello H;
  H.Magic = HelloMagic;
  H.Secret = Secret;
  H.Kind = Kind;
  H.Rank = Rank;
  H.NRanks = NRanks;
  H.Tag = Tag;
  return H;
}

Socket connectWithHello(const SocketAddress &To, const Hello &H, const Deadline &D,
                        const std::string &What) {
  Socket S = Socket::connect(To, D, What);
  S.sendAll(&H, sizeof H, D, What);
  return S;
}

Listener::Listener(const SocketAddress &Bind) : S(Socket::listen(Bind)), Addr(S.localAddress()) {}

bool Listener::acceptWaiting() {
  for (size_t Accepted = 0; Accepted < MaxPendingHellos; ++Accepted) {
    if (Waiting.size() == MaxPendingHellos)
      dropOldest("more than " + std::to_string(MaxPendingHellos) +
                 " connections waited to present a secret");
    Pending P;
    socklen_t Len = sizeof P.From;
    int Fd = ::accept4(S.fd(), &P.From.Sa, &Len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (Fd < 0) {
      int Err = errno;
      if (Err == EAGAIN || Err == EWOULDBLOCK || Err == EINTR || Err == ECONNABORTED)
        return true;
      if (Err != EMFILE && Err != ENFILE && Err != ENOBUFS && Err != ENOMEM)
        throw NetError("cannot accept connections on " + Addr.str() + ": " + errnoText(Err));
      // Out of descriptors or memory: make room, or wait for some to free.
      if (Waiting.empty())
        return false;
      dropOldest("no descriptor was left (" + errnoText(Err) + ") to accept another connection");
      continue;
    }
    setNoDelay(Fd);
    P.S = Socket(Fd);
    P.Since = std::chrono::steady_clock::now();
    Waiting.push_back(std::move(P));
  }
  return true;
}

void Listener::dropOldest(const std::string &Reason) {
  logRefusal(Waiting.front().From, "it presented no secret yet, and " + Reason);
  Waiting.erase(Waiting.begin());
}

bool Listener::readHello(Pending &P) {
  ssize_t N = ::recv(P.S.fd(), reinterpret_cast<std::byte *>(&P.H) + P.Got, sizeof(Hello) - P.Got,
                     MSG_DONTWAIT);
  if (N > 0) {
    P.Got += size_t(N);
    return P.Got == sizeof(Hello);
  }
  if (N < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return false;
  throw NetError(N == 0 ? "it closed the connection before presenting a secret"
                        : "it failed before presenting a secret: " + errnoText(errno));
}

std::optional<Listener::Accepted> Listener::takeReady(uint64_t Secret,
                                                      std::chrono::milliseconds Limit) {
  auto Now = std::chrono::steady_clock::now();
  for (size_t I = 0; I < Waiting.size();) {
    Pending &P = Waiting[I];
    std::string Refusal;
    try {
      if (readHello(P)) {
        if (P.H.Magic == HelloMagic && P.H.Secret == Secret) {
          Accepted A{std::move(P.S), P.From, P.H};
          Waiting.erase(Waiting.begin() + std::ptrdiff_t(I));
          return A;
        }
        Refusal = "it did not present this job's secret";
      } else if (Now - P.Since > Limit) {
        Refusal = "it presented no secret within " + std::to_string(Limit.count()) + " ms";
      }
    } catch (const NetError &E) {
      Refusal = E.what();
    }
    if (Refusal.empty()) {
      ++I;
      continue;
    }
    logRefusal(P.From, Refusal);
    Waiting.erase(Waiting.begin() + std::ptrdiff_t(I));
  }
  return std::nullopt;
}

Listener::Accepted Listener::accept(uint64_t Secret, const Deadline &D, const std::string &What) {
  std::chrono::milliseconds Limit = std::min(D.timeout(), HelloTimeout);
  for (;;) {
    // The connections accepted before are read first, so that a full list
    // only ever drops connections that were read and had sent nothing.
    if (std::optional<Accepted> A = takeReady(Secret, Limit))
      return std::move(*A);
    bool CanAccept = acceptWaiting();
    if (std::optional<Accepted> A = takeReady(Secret, Limit))
      return std::move(*A);
    // Without descriptors, the listener stays readable: look again shortly
    // instead of polling it.
    std::vector<pollfd> Fds;
    if (CanAccept)
      Fds.push_back({S.fd(), POLLIN, 0});
    for (const Pending &P : Waiting)
      Fds.push_back({P.S.fd(), POLLIN, 0});
    int Ms = D.slice(What);
    pollOrThrow(Fds.data(), Fds.size(), CanAccept ? Ms : std::min(Ms, DescriptorRetryMs));
  }
}

} // namespace cclc::net
