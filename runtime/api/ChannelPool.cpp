//===- ChannelPool.cpp - Threads that run a collective's channels ---------===//

#include "runtime/api/ChannelPool.h"

namespace cclc::runtime {

ChannelPool::~ChannelPool() {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Stopping = true;
  }
  Start.notify_all();
  for (std::thread &T : Workers)
    T.join();
}

const std::vector<std::exception_ptr> &ChannelPool::run(int Channels, ChannelJob Run) {
  if (Channels == 1) {
    Errors.resize(1);
    Errors[0] = nullptr;
    try {
      Run(0);
    } catch (...) {
      Errors[0] = std::current_exception();
    }
    return Errors;
  }
  {
    std::lock_guard<std::mutex> Guard(Lock);
    while (int(Workers.size()) + 1 < Channels)
      Workers.emplace_back([this, Channel = int(Workers.size()) + 1] { work(Channel); });
    NChannels = Channels;
    Pending = Channels - 1;
    Job = &Run;
    Errors.assign(size_t(Channels), nullptr);
    ++Generation;
  }
  Start.notify_all();
  std::exception_ptr First;
  try {
    Run(0);
  } catch (...) {
    First = std::current_exception();
  }
  std::unique_lock<std::mutex> Guard(Lock);
  Done.wait(Guard, [&] { return Pending == 0; });
  Errors[0] = First;
  Job = nullptr;
  return Errors;
}

void ChannelPool::work(int Channel) {
  // A worker started during a call takes part in it.
  uint64_t Seen = 0;
  std::unique_lock<std::mutex> Guard(Lock);
  for (;;) {
    Start.wait(Guard, [&] { return Stopping || Generation != Seen; });
    if (Stopping)
      return;
    Seen = Generation;
    if (Channel >= NChannels)
      continue;
    const ChannelJob *Run = Job;
    Guard.unlock();
    std::exception_ptr Error;
    try {
      (*Run)(Channel);
    } catch (...) {
      Error = std::current_exception();
    }
    Guard.lock();
    Errors[size_t(Channel)] = Error;
    if (--Pending == 0)
      Done.notify_all();
  }
}

} // namespace cclc::runtime
