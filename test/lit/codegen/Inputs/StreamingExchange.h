//===- StreamingExchange.h - A user primitive with two peers -----*- C++ -*-===//
//
// An exchange whose receive stores around the cache, built on
// StreamingCopy.h: a primitive of a user's own whose effect is a
// communication, so one call becomes the two steps of an exchange.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "StreamingCopy.h"

namespace streaming {

/// Sends Src to Out while receiving In's next message into Dst, in whichever
/// order the peers allow, as exchange does.
template <class T, class Op>
CCLC_PRIMITIVE("exchange_streaming", "exchange")
void exchangeStreaming(cclc::host::Outbox &Out, cclc::host::Inbox &In,
                       cclc::host::Slice<const T> Src, cclc::host::Slice<T> Dst) {
  auto Receive = [&] {
    const std::byte *Slot = In.peek(Dst.bytes());
    size_t Off = 0;
    Dst.forEachRun([&](T *P, size_t N) {
      streamBytes(Slot + Off, reinterpret_cast<std::byte *>(P), N * sizeof(T));
      Off += N * sizeof(T);
    });
    In.release();
  };
  Out.Wait->until([&] { return Out.ready() || In.ready(); }, "exchange with", Out.Peer);
  if (Out.ready()) {
    cclc::host::send<T, Op>(Out, Src);
    Receive();
  } else {
    Receive();
    cclc::host::send<T, Op>(Out, Src);
  }
}

} // namespace streaming
