//===- ChannelPool.h - Threads that run a collective's channels -*- C++ -*-===//
//
// The channels of a schedule run concurrently, each on a thread of its own.
// Starting threads on every call would cost more than a small collective, so
// the pool keeps one worker per channel beyond the first (which runs on the
// calling thread, so single-channel algorithms never switch threads) and
// hands each call's channels to them.
//
// Waiting for the workers needs no timeout of its own: every wait inside a
// channel is bounded by the transports' timeout and abort flags.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace cclc::runtime {

/// What a call runs on each channel: a reference to the caller's callable,
/// which outlives the call. Unlike std::function it neither copies nor
/// allocates, whatever the callable captures, so that a call's hot path
/// allocates nothing.
class ChannelJob {
public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, ChannelJob> &&
             std::is_invocable_v<F &, int>)
  ChannelJob(F &&Run)
      : Callable(const_cast<void *>(static_cast<const void *>(&Run))),
        Call([](void *C, int Channel) {
          (*static_cast<std::remove_reference_t<F> *>(C))(Channel);
        }) {}

  void operator()(int Channel) const { Call(Callable, Channel); }

private:
  void *Callable;
  void (*Call)(void *, int);
};

class ChannelPool {
public:
  ChannelPool() = default;
  /// Stops and joins the workers; no call may be running.
  ~ChannelPool();
  ChannelPool(const ChannelPool &) = delete;
  ChannelPool &operator=(const ChannelPool &) = delete;

  /// Calls Run(C) for every channel C below NChannels, all at once, and
  /// returns when every one has returned: each channel's exception, or null
  /// where it finished, valid until the next call. A single channel runs on
  /// the caller alone, with no lock taken and nothing allocated after the
  /// first call.
  const std::vector<std::exception_ptr> &run(int NChannels, ChannelJob Run);

private:
  void work(int Channel);

  std::mutex Lock;
  std::condition_variable Start, Done;
  /// Counts calls, so that each worker runs each call's channel once.
  uint64_t Generation = 0;
  int NChannels = 0;
  int Pending = 0;
  bool Stopping = false;
  const ChannelJob *Job = nullptr;
  std::vector<std::exception_ptr> Errors;
  /// Workers[I] runs channel I + 1.
  std::vector<std::thread> Workers;
};

} // namespace cclc::runtime
