/*===- cclc.h - The cclc runtime's C API -------------------------*- C -*-===*\
|*                                                                            *|
|* NCCL's shape: get a unique id on one rank, share it, init a communicator   *|
|* on every rank, call collectives. Algorithms come from compiled plans       *|
|* (cclc compile --emit=json) and linked generated kernels; each call picks   *|
|* the loaded algorithm whose message-size window holds it. Every call        *|
|* returns a status; cclcGetLastError says what went wrong and what to do.   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#ifndef CCLC_H
#define CCLC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CCLC_UNIQUE_ID_BYTES 128
/** Identifies one job: the root's address and a random secret. */
typedef struct {
  char internal[CCLC_UNIQUE_ID_BYTES];
} cclcUniqueId;

typedef struct cclcComm *cclcComm_t;
/** A cudaStream_t for GPU buffers; NULL for host buffers. */
typedef void *cclcStream_t;

typedef enum {
  cclcSuccess = 0,
  cclcSystemError = 1,     /**< A system call failed (sockets, shared memory). */
  cclcInternalError = 2,   /**< A bug in cclc. */
  cclcInvalidArgument = 3, /**< A bad pointer, count, type or operator. */
  cclcInvalidUsage = 4,    /**< A call that does not fit the communicator's state. */
  cclcRemoteError = 5,     /**< A peer failed, died or timed out. */
  cclcTimeout = 6,         /**< A blocking call ran past its timeout. */
  cclcNoAlgorithm = 7,     /**< No loaded algorithm serves the call. */
  cclcNumResults = 8
} cclcResult_t;

typedef enum {
  cclcInt8 = 0,
  cclcUint8 = 1,
  cclcInt32 = 2,
  cclcUint32 = 3,
  cclcInt64 = 4,
  cclcUint64 = 5,
  cclcFloat16 = 6,
  cclcFloat32 = 7,
  cclcFloat64 = 8,
  cclcBfloat16 = 9,
  cclcNumTypes = 10
} cclcDataType_t;

typedef enum { cclcSum = 0, cclcProd = 1, cclcMax = 2, cclcMin = 3, cclcNumOps = 4 } cclcRedOp_t;

const char *cclcGetErrorString(cclcResult_t result);
/** The last error's message on this thread: the cause and what to do. */
const char *cclcGetLastError(cclcComm_t comm);

/** Starts the root of a new job (in this process) and returns its id. */
cclcResult_t cclcGetUniqueId(cclcUniqueId *uniqueId);
cclcResult_t cclcCommInitRank(cclcComm_t *comm, int nranks, cclcUniqueId commId, int rank);
/** Joins the job a launcher started: Open MPI, Slurm, or MASTER_ADDR/RANK/WORLD_SIZE. */
cclcResult_t cclcCommInitFromEnvironment(cclcComm_t *comm);
/** Waits for the peers to finish, then frees everything. */
cclcResult_t cclcCommDestroy(cclcComm_t comm);
/** Stops every pending operation at once, here and at the peers, and frees
 *  everything; the only call that may come from another thread while one runs. */
cclcResult_t cclcCommAbort(cclcComm_t comm);
cclcResult_t cclcCommCount(const cclcComm_t comm, int *count);
cclcResult_t cclcCommUserRank(const cclcComm_t comm, int *rank);

/** Loads a plan written by `cclc compile --emit=json`, checked field by field and
 *  verified again. Collective: every rank loads the same plans in the same order
 *  (connecting the plan's transports takes every rank). */
cclcResult_t cclcCommLoadPlan(cclcComm_t comm, const char *path);
/** Loads a plan held in memory (JSON text). */
cclcResult_t cclcCommLoadPlanText(cclcComm_t comm, const char *json, size_t bytes);
/** Registers linked generated host kernels: a table of cclc::host::KernelInfo.
 *  Collective, like loading a plan. */
cclcResult_t cclcCommRegisterKernels(cclcComm_t comm, const void *kernelInfos, size_t count);

/* Collectives follow NCCL: in place when sendbuff == recvbuff (allgather:
 * sendbuff == recvbuff + rank * sendcount; reduce-scatter: recvbuff ==
 * sendbuff + rank * recvcount); broadcast reads sendbuff on the root only and
 * reduce writes recvbuff on the root only. A call with no loaded algorithm
 * for it runs the library's ring and says so on stderr. */

cclcResult_t cclcAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           cclcDataType_t datatype, cclcRedOp_t op, cclcComm_t comm,
                           cclcStream_t stream);
cclcResult_t cclcAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                           cclcDataType_t datatype, cclcComm_t comm, cclcStream_t stream);
cclcResult_t cclcReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                               cclcDataType_t datatype, cclcRedOp_t op, cclcComm_t comm,
                               cclcStream_t stream);
cclcResult_t cclcBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           cclcDataType_t datatype, int root, cclcComm_t comm,
                           cclcStream_t stream);
cclcResult_t cclcReduce(const void *sendbuff, void *recvbuff, size_t count,
                        cclcDataType_t datatype, cclcRedOp_t op, int root, cclcComm_t comm,
                        cclcStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* CCLC_H */
