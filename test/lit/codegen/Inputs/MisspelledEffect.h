// A header whose primitive names an effect the language does not have.
#pragma once

#include "host/Primitives.h"

namespace misspelled {

template <class T, class Op>
CCLC_PRIMITIVE("copy_twice", "cpy")
void copyTwice(cclc::host::Slice<const T> Src, cclc::host::Slice<T> Dst);

} // namespace misspelled
