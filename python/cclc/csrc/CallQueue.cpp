//===- CallQueue.cpp - One communicator's calls, in order, off the caller -===//

#include "CallQueue.h"

namespace cclc::torch {

CallQueue::~CallQueue() {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Stopping = true;
  }
  Changed.notify_all();
  if (Thread.joinable())
    Thread.join();
}

void CallQueue::runOne(Call &C) {
  std::exception_ptr Error;
  try {
    C.Run();
  } catch (...) {
    Error = std::current_exception();
  }
  C.Done(Error);
}

void CallQueue::submit(size_t Bytes, Call C) {
  std::unique_lock<std::mutex> Guard(Lock);
  if (Bytes < InlineBytes && !Busy && Queued.empty()) {
    Busy = true;
    Guard.unlock();
    runOne(C);
    Guard.lock();
    Busy = false;
    Guard.unlock();
    Changed.notify_all();
    return;
  }
  Queued.push_back(std::move(C));
  if (!Thread.joinable())
    Thread = std::thread([this] { serve(); });
  Guard.unlock();
  Changed.notify_all();
}

void CallQueue::serve() {
  std::unique_lock<std::mutex> Guard(Lock);
  for (;;) {
    Changed.wait(Guard, [&] { return (!Queued.empty() && !Busy) || (Stopping && Queued.empty()); });
    if (Queued.empty())
      return;
    Call C = std::move(Queued.front());
    Queued.pop_front();
    Busy = true;
    Guard.unlock();
    runOne(C);
    Guard.lock();
    Busy = false;
  }
}

} // namespace cclc::torch
