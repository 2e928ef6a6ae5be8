//===- Module.cpp - The cclc._C extension module --------------------------===//
//
// Exposes the backend's constructor to Python, which registers it with
// torch.distributed (cclc/torch.py). The backend is bound as a subclass of
// torch's own Backend class, so the process group takes it like any other.
//
//===----------------------------------------------------------------------===//

#include "MappedAllocator.h"
#include "ProcessGroupCclc.h"

#include <torch/csrc/utils/pybind.h>

#include <pybind11/chrono.h>
#include <pybind11/stl.h>

PYBIND11_MODULE(TORCH_EXTENSION_NAME, M) {
  M.doc() = "The cclc collective library as a torch.distributed backend";
  pybind11::module_::import("torch.distributed");
  pybind11::class_<cclc::torch::ProcessGroupCclc, c10d::Backend,
                   c10::intrusive_ptr<cclc::torch::ProcessGroupCclc>>(M, "ProcessGroupCclc");
  M.def("create_backend", &cclc::torch::createProcessGroupCclc, pybind11::arg("store"),
        pybind11::arg("rank"), pybind11::arg("size"), pybind11::arg("timeout"),
        pybind11::arg("plan_files"),
        "Joins the group through store and loads plan_files (the same on every rank)",
        pybind11::call_guard<pybind11::gil_scoped_release>());
  M.def("use_mapped_memory", &cclc::torch::MappedAllocator::use, pybind11::arg("min_bytes"),
        pybind11::arg("cache_bytes"),
        "Serves CPU tensors of min_bytes and more from memory the ranks of a host map");
  M.def("mapped_memory_stats", [] {
    auto S = cclc::torch::MappedAllocator::stats();
    pybind11::dict D;
    D["live_bytes"] = S.LiveBytes;
    D["idle_bytes"] = S.IdleBytes;
    D["buffers"] = S.Buffers;
    return D;
  });
  M.def("empty_mapped_cache", &cclc::torch::MappedAllocator::emptyCache);
}
