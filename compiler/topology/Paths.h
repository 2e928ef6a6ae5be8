//===- Paths.h - Paths between the nodes of a System -----------*- C++ -*-===//
//
// NCCL's ncclTopoComputePaths: a breadth-first search from every CPU, GPU, NET
// and NVS node gives every other node its widest shortest path there, typed by
// what it crosses (NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS). GPU pairs
// that P2P may not join (NCCL_P2P_LEVEL, NVML's peer access) are rerouted
// through the CPU, and marked NET when shared memory cannot join them either;
// NICs without GPU Direct RDMA are reached through the CPU, and NICs behind a
// NVLink peer are reached through that peer (PXN). trimSystem then drops what a single node does not
// use, as NCCL does when all ranks share one host.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/topology/System.h"

namespace cclc::topo {

/// Fills Node::Paths for paths to CPU, GPU, NET and NVS nodes and applies
/// NCCL's P2P, GDR, C2C and PXN rules. Recomputes from scratch.
void computePaths(System &Sys);

/// NCCL's ncclTopoTrimSystem for identical nodes: with one node every rank is
/// local, so the NET nodes are removed (the search then stays in the node).
/// Paths must be recomputed afterwards.
void trimSystem(System &Sys, int NumNodes);

/// The farthest path type GPUs use P2P over: NCCL_P2P_LEVEL when set, else
/// NCCL's default, PXB (not across a CPU host bridge), or SYS for at most two
/// GPUs on an AMD x86 CPU.
PathType p2pLevel(const System &Sys);

/// NCCL's ncclTopoCheckP2p: whether two GPUs may talk directly (no CPU
/// bounce): the path between them is no farther than p2pLevel and, unless
/// NCCL_IGNORE_DISABLED_P2P=2, NVML reports peer access between them.
bool p2pAllowed(const System &Sys, int Gpu1, int Gpu2);

/// NCCL_NET_GDR_LEVEL when set, else NCCL's PXB.
PathType netGdrLevel(const System &Sys);

/// NCCL's ncclTopoCheckGdr for receives: whether GPU Direct RDMA is used
/// between a GPU and a NET (both support it and they are no farther apart
/// than netGdrLevel).
bool gdrAllowed(const System &Sys, int Gpu, int Net);

/// What NCCL's init refuses or cannot model as one node, reported through
/// Diags: GPUs joined by NVLink whose peer access is off (NCCL stops unless
/// NCCL_IGNORE_DISABLED_P2P is set), and GPUs that can use neither P2P nor
/// shared memory, which NCCL splits into separate network domains. True when
/// the System may be searched as one node.
bool checkPeerAccess(const System &Sys, DiagnosticEngine &Diags);

/// NCCL's ncclTopoGetLocalNet: the NET a GPU rank uses for channel Channel.
int localNet(const System &Sys, int Gpu, int Channel);
/// NCCL's ncclTopoGetLocalGpu: the GPU a NET is the local NIC of, or -1.
int localGpu(const System &Sys, int Net);

/// The CPU closest to a GPU (fewest hops), -1 when none is reachable.
int localCpu(const System &Sys, int Gpu);

} // namespace cclc::topo
