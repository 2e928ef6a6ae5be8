/*===- cclc.h - The cclc runtime's C API -------------------------*- C -*-===*\
|*                                                                            *|
|* NCCL's shape: get a unique id on one rank, share it, init a communicator   *|
|* on every rank, call collectives. Algorithms come from compiled plans       *|
|* (cclc compile --emit=json) and linked generated kernels; each call picks   *|
|* the loaded algorithm whose message-size window holds it, on the host or,   *|
|* given a CUDA stream, on the GPU. Sends, receives and alltoall run on the   *|
|* host, alone or in groups. Every call returns a status; cclcGetLastError    *|
|* says what went wrong and what to do.                                       *|
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
/** A cudaStream_t. A collective runs on the GPU, enqueued on this stream,
 *  when the stream is not NULL or when its buffers are device memory (then on
 *  the legacy default stream); otherwise it runs on the host and returns once
 *  done. A communicator uses the CUDA device that is current on the calling
 *  thread when it first runs on the GPU. Where CUDA finds no usable device, a
 *  GPU call returns cclcSystemError (cclcInvalidUsage in a runtime built
 *  without CUDA) and the communicator goes on serving host calls. */
typedef void *cclcStream_t;

typedef enum {
  cclcSuccess = 0,
  cclcSystemError = 1,     /**< A system call or CUDA failed (sockets, a GPU). */
  cclcInternalError = 2,   /**< A bug in cclc. */
  cclcInvalidArgument = 3, /**< A bad pointer, count, type or operator. */
  cclcInvalidUsage = 4,    /**< A call that does not fit the state or a peer's call. */
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
/** Joins the job of commId as rank of nranks (1 to 65536; more is refused
 *  with cclcInvalidArgument). */
cclcResult_t cclcCommInitRank(cclcComm_t *comm, int nranks, cclcUniqueId commId, int rank);
/** Joins the job a launcher started: Open MPI, Slurm, or MASTER_ADDR/RANK/WORLD_SIZE. */
cclcResult_t cclcCommInitFromEnvironment(cclcComm_t *comm);
/** Waits for the communicator's GPU work and for the peers to finish, then
 *  frees everything. */
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

/** Registers linked generated CUDA kernels: a table of cclc::cuda::KernelInfo
 *  (the <algorithm>_kernels table of cclc compile --emit=cuda). Collective, like
 *  loading a plan. Fails with cclcInvalidUsage when the runtime was built
 *  without CUDA. */
cclcResult_t cclcCommRegisterCudaKernels(cclcComm_t comm, const void *kernelInfos, size_t count);
/** Whether a GPU call that no loaded algorithm serves runs the library's ring
 *  on the GPU (enabled, the default) or is refused with cclcNoAlgorithm before
 *  anything is sent or enqueued, for callers with another library to run it
 *  (NCCL's API over cclc forwards such calls to the real NCCL). Host calls
 *  always fall back on the ring. Every rank sets the same. */
cclcResult_t cclcCommSetGpuFallback(cclcComm_t comm, int enabled);
/** Sets *asyncError to the communicator's failure: that of a GPU collective,
 *  which returns before it runs, or of any earlier call; cclcSuccess while
 *  none failed, else the failure's status (cclcGetLastError then says what
 *  happened), after which the communicator takes no more calls. Reads the
 *  kernels' status without waiting for them. */
cclcResult_t cclcCommGetAsyncError(cclcComm_t comm, cclcResult_t *asyncError);

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

/* Point-to-point calls follow NCCL, on the host only (host buffers, a NULL
 * stream; anything else returns cclcInvalidUsage). They are not collective:
 * only the ranks they name take part. A pair of ranks connects at its first
 * message, which both must reach: a call (or group) that meets a peer for
 * the first time waits, up to the timeout, for that peer to issue one that
 * names it. The sends and receives between one ordered pair of ranks match
 * in the order they are issued, and a send and its receive pass the same
 * count and type; a receive that gets another size fails, saying both. A
 * call that fails once messages move fails the communicator, as a failed
 * collective does. */

/** Sends count elements of sendbuff to rank peer; outside a group, returns
 *  once they are sent (large messages wait for the peer's receive). */
cclcResult_t cclcSend(const void *sendbuff, size_t count, cclcDataType_t datatype, int peer,
                      cclcComm_t comm, cclcStream_t stream);
/** Receives count elements from rank peer into recvbuff; outside a group,
 *  returns once they are there. */
cclcResult_t cclcRecv(void *recvbuff, size_t count, cclcDataType_t datatype, int peer,
                      cclcComm_t comm, cclcStream_t stream);
/** Opens a group on the calling thread; groups nest. The sends, receives
 *  and alltoalls issued until the outermost cclcGroupEnd are checked and
 *  queued, then run together at that cclcGroupEnd, so that a rank can send
 *  to and receive from many peers at once without deadlock. A send to
 *  one's own rank is a copy, matched with a receive from it in the same
 *  group. A group holds the calls of one communicator; a collective (other
 *  than cclcAllToAll) inside a group, or any call refused there, drops the
 *  whole group: its cclcGroupEnd runs nothing and returns the refusal. */
cclcResult_t cclcGroupStart(void);
/** Closes the group cclcGroupStart opened; the outermost runs its calls and
 *  returns once all are done. Without an open group, returns
 *  cclcInvalidUsage. */
cclcResult_t cclcGroupEnd(void);
/** Sends block j of sendbuff (count elements at j * count) to rank j, and
 *  receives block j of recvbuff from rank j, for every rank j, as
 *  MPI_Alltoall: sends and receives to every rank, in a group. In place
 *  when sendbuff == recvbuff; other overlaps are refused. */
cclcResult_t cclcAllToAll(const void *sendbuff, void *recvbuff, size_t count,
                          cclcDataType_t datatype, cclcComm_t comm, cclcStream_t stream);

/** Allocates size bytes of host memory, page-aligned and zeroed, that the
 *  other ranks of this host can map, as ncclMemAlloc gives memory NCCL can
 *  register: a collective whose output lies in it takes the large messages of
 *  those ranks as one memcpy each, where other memory takes a system call
 *  (process_vm_writev) per message. Any communicator, any number of them, may
 *  use it. Free it with cclcMemFree. Where the system refuses such memory (a
 *  sandbox that forbids memfd_create, or shared memory that ran out) it
 *  returns cclcSystemError with the cause; collectives then work as on any
 *  other memory. */
cclcResult_t cclcMemAlloc(void **ptr, size_t size);
/** Frees memory from cclcMemAlloc (NULL: nothing); any other pointer is
 *  refused with cclcInvalidArgument. No call may be using it. */
cclcResult_t cclcMemFree(void *ptr);

/** Receives the runtime's log lines: level is "INFO" or "WARN", rank the
 *  communicator's rank, message one line without its newline. */
typedef void (*cclcLogHandler_t)(const char *level, int rank, const char *message);
/** Sends the runtime's log lines (CCLC_DEBUG) to handler instead of stderr,
 *  for the whole process; NULL restores stderr. For libraries that log in a
 *  format of their own, as NCCL's API over cclc does. */
cclcResult_t cclcSetLogHandler(cclcLogHandler_t handler);

#ifdef __cplusplus
}
#endif

#endif /* CCLC_H */
