//===- CallQueue.h - One communicator's calls, in order, off the caller -*- C++ -*-===//
//
// torch.distributed hands a backend its calls in program order and expects
// asynchronous ones back at once: DDP starts the allreduce of a gradient
// bucket from an autograd hook and goes on with the backward pass, and only
// waits for the bucket's future at the end. A communicator runs one call at
// a time, in the order every rank issues them, so the queue keeps that
// order: each call runs after every call submitted before it, on the
// queue's thread.
//
// Handing a call to a thread and back costs tens of microseconds, more than
// a small collective takes; so a call smaller than the inline limit, when
// nothing is queued or running, runs on the calling thread instead, which
// keeps the order just as well.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace cclc::torch {

class CallQueue {
public:
  /// What runs a call; Done receives its exception, or null where it
  /// succeeded, on the thread that ran it.
  struct Call {
    std::function<void()> Run;
    std::function<void(std::exception_ptr)> Done;
  };

  /// Calls of fewer than InlineBytes bytes may run on the calling thread.
  explicit CallQueue(size_t InlineBytes) : InlineBytes(InlineBytes) {}
  /// Runs what is queued, then stops the thread.
  ~CallQueue();
  CallQueue(const CallQueue &) = delete;
  CallQueue &operator=(const CallQueue &) = delete;

  /// Runs C after every call submitted before it: at once on this thread
  /// when it moves fewer than the inline limit's bytes and the queue is
  /// idle, else on the queue's thread.
  void submit(size_t Bytes, Call C);

private:
  void serve();
  static void runOne(Call &C);

  const size_t InlineBytes;
  std::mutex Lock;
  std::condition_variable Changed;
  std::deque<Call> Queued;
  /// A call is running, on either thread.
  bool Busy = false;
  bool Stopping = false;
  /// Started with the first call that does not run inline.
  std::thread Thread;
};

} // namespace cclc::torch
