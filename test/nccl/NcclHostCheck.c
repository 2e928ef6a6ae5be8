/*===- NcclHostCheck.c - A program written against nccl.h alone ---------===*\
|*                                                                            *|
|* Runs NCCL's API with host buffers on ranks forked from this process, the  *|
|* parent holding the unique id, and checks every result element by element. *|
|* It includes no cclc header: built against cclc's NCCL library it runs     *|
|* cclc's algorithms; built against the real NCCL it must compile and link   *|
|* unchanged. It is C, and is also compiled as C++.                          *|
|*                                                                            *|
|*   nccl-host-check NRANKS CASE                                              *|
|*                                                                            *|
|* CASE: collectives (every collective, datatype and operator; an allgather   *|
|* into ncclMemAlloc's memory), groups                                        *|
|* (collectives fused in a group, send/recv rings), split (ncclCommSplit),   *|
|* initall (ncclCommInitAll driven from one thread), errors (refused        *|
|* arguments), abort (ncclCommAbort of a call stuck on another thread),     *|
|* killed (the last rank dies; the others get errors, also asynchronously), *|
|* fp8 (8-bit float allreduces, which cclc forwards to the real NCCL, beside *|
|* float32 ones and 8-bit float broadcasts that it serves; up to 4 ranks),  *|
|* initfails (ncclCommInitRank must fail, saying why).                       *|
|* Each rank prints "rank R: CASE ok" or what was wrong, and exits 0 or 1.   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#include <nccl.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int Rank, NRanks, Failures;

#define CHECK(Call)                                                                              \
  do {                                                                                           \
    ncclResult_t R_ = (Call);                                                                    \
    if (R_ != ncclSuccess) {                                                                     \
      printf("rank %d: %s failed: %s: %s\n", Rank, #Call, ncclGetErrorString(R_),              \
             ncclGetLastError(NULL));                                                            \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

static void expect(int Ok, const char *What, size_t Index) {
  if (!Ok && Failures++ < 10)
    printf("rank %d: %s: wrong element %zu\n", Rank, What, Index);
}

/* Element I of a buffer of type T holds the small integer V; halves are
 * written from their bits, exactly. */
static uint16_t halfBits(unsigned V) {
  if (V == 0)
    return 0;
  int E = 0;
  while ((V >> (E + 1)) != 0)
    ++E;
  return (uint16_t)(((E + 15) << 10) | ((V << (10 - E)) & 0x3ff));
}

static uint16_t bfloatBits(unsigned V) {
  float F = (float)V;
  uint32_t U;
  memcpy(&U, &F, 4);
  return (uint16_t)(U >> 16);
}

static const ncclDataType_t Types[] = {ncclInt8,  ncclUint8,   ncclInt32,   ncclUint32, ncclInt64,
                                       ncclUint64, ncclFloat16, ncclFloat32, ncclFloat64,
                                       ncclBfloat16};
static const char *TypeNames[] = {"int8",    "uint8",   "int32",   "uint32",  "int64",
                                  "uint64",  "float16", "float32", "float64", "bfloat16"};
#define NTYPES 10

static size_t sizeOf(ncclDataType_t T) {
  switch (T) {
  case ncclInt8:
  case ncclUint8: return 1;
  case ncclFloat16:
  case ncclBfloat16: return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32: return 4;
  default: return 8;
  }
}

static void put(void *Buffer, ncclDataType_t T, size_t I, unsigned V) {
  char *B = (char *)Buffer;
  switch (T) {
  case ncclInt8: ((int8_t *)B)[I] = (int8_t)V; break;
  case ncclUint8: ((uint8_t *)B)[I] = (uint8_t)V; break;
  case ncclInt32: ((int32_t *)B)[I] = (int32_t)V; break;
  case ncclUint32: ((uint32_t *)B)[I] = V; break;
  case ncclInt64: ((int64_t *)B)[I] = V; break;
  case ncclUint64: ((uint64_t *)B)[I] = V; break;
  case ncclFloat16: ((uint16_t *)B)[I] = halfBits(V); break;
  case ncclFloat32: ((float *)B)[I] = (float)V; break;
  case ncclFloat64: ((double *)B)[I] = V; break;
  default: ((uint16_t *)B)[I] = bfloatBits(V); break;
  }
}

static int holds(const void *Buffer, ncclDataType_t T, size_t I, unsigned V) {
  char Want[8];
  put(Want, T, 0, V);
  return memcmp((const char *)Buffer + I * sizeOf(T), Want, sizeOf(T)) == 0;
}

/* What rank R contributes at element I for operator Op, and the reduction
 * of every rank's contribution: small integers, exact in every type. */
static unsigned input(int Op, int R, size_t I) {
  switch (Op) {
  case ncclProd: return (size_t)R == I % (size_t)NRanks ? 2 : 1;
  case ncclMax:
  case ncclMin: return (unsigned)((R * 7 + I) % 11);
  case ncclAvg: return (unsigned)(NRanks * ((R + I) % 2));
  default: return (unsigned)((R + I) % 3);
  }
}

static unsigned reduced(int Op, size_t I) {
  unsigned Result = Op == ncclProd ? 1 : Op == ncclMin ? 100 : 0;
  for (int R = 0; R < NRanks; ++R) {
    unsigned V = input(Op, R, I);
    switch (Op) {
    case ncclProd: Result *= V; break;
    case ncclMax: Result = V > Result ? V : Result; break;
    case ncclMin: Result = V < Result ? V : Result; break;
    case ncclAvg: Result += V / NRanks; break;
    default: Result += V; break;
    }
  }
  return Op == ncclNumOps ? 2 * Result : Result; /* ncclNumOps: the pre-multiplied sum by 2 */
}

static void *filled(ncclDataType_t T, size_t Count, int Op, int R, size_t First) {
  void *B = malloc(Count * sizeOf(T) + 1);
  for (size_t I = 0; I < Count; ++I)
    put(B, T, I, input(Op, R, First + I));
  return B;
}

static void collectives(ncclComm_t Comm) {
  const size_t Count = 1031; /* odd, and more than one slot of small types */
  for (int K = 0; K < NTYPES; ++K) {
    ncclDataType_t T = Types[K];
    size_t S = sizeOf(T);
    for (int Op = 0; Op <= ncclNumOps; ++Op) {
      ncclRedOp_t Red = (ncclRedOp_t)Op;
      if (Op == ncclNumOps) {
        char Two[8];
        put(Two, T, 0, 2);
        CHECK(ncclRedOpCreatePreMulSum(&Red, Two, T, ncclScalarHostImmediate, Comm));
      }
      int Input = Op == ncclNumOps ? ncclSum : Op;
      /* allreduce, out of place and in place */
      void *In = filled(T, Count, Input, Rank, 0), *Out = malloc(Count * S);
      CHECK(ncclAllReduce(In, Out, Count, T, Red, Comm, 0));
      CHECK(ncclAllReduce(In, In, Count, T, Red, Comm, 0));
      for (size_t I = 0; I < Count; ++I) {
        expect(holds(Out, T, I, reduced(Op, I)), TypeNames[K], I);
        expect(holds(In, T, I, reduced(Op, I)), "in-place allreduce", I);
      }
      free(In);
      /* reduce to the last rank */
      In = filled(T, Count, Input, Rank, 0);
      memset(Out, 0, Count * S);
      CHECK(ncclReduce(In, Out, Count, T, Red, NRanks - 1, Comm, 0));
      for (size_t I = 0; Rank == NRanks - 1 && I < Count; ++I)
        expect(holds(Out, T, I, reduced(Op, I)), "reduce", I);
      free(In);
      /* reduce-scatter: block R of the reduction */
      In = malloc(Count * NRanks * S);
      for (size_t I = 0; I < Count * NRanks; ++I)
        put(In, T, I, input(Input, Rank, I));
      CHECK(ncclReduceScatter(In, Out, Count, T, Red, Comm, 0));
      for (size_t I = 0; I < Count; ++I)
        expect(holds(Out, T, I, reduced(Op, Rank * Count + I)), "reduce-scatter", I);
      free(In);
      free(Out);
      if (Op == ncclNumOps)
        CHECK(ncclRedOpDestroy(Red, Comm));
    }
    /* allgather, broadcast, alltoall, gather, scatter: rank R's block holds R + I */
    void *Mine = malloc(Count * S), *All = malloc(Count * NRanks * S);
    for (size_t I = 0; I < Count; ++I)
      put(Mine, T, I, (unsigned)((Rank + I) % 100));
    CHECK(ncclAllGather(Mine, All, Count, T, Comm, 0));
    for (size_t I = 0; I < Count * NRanks; ++I)
      expect(holds(All, T, I, (unsigned)((I / Count + I % Count) % 100)), "allgather", I);
    int Root = 1 % NRanks;
    void *Got = malloc(Count * S);
    CHECK(ncclBroadcast(Mine, Got, Count, T, Root, Comm, 0));
    CHECK(ncclBcast(Mine, Count, T, Root, Comm, 0));
    for (size_t I = 0; I < Count; ++I) {
      expect(holds(Got, T, I, (unsigned)((Root + I) % 100)), "broadcast", I);
      expect(holds(Mine, T, I, (unsigned)((Root + I) % 100)), "bcast", I);
    }
    void *Sent = malloc(Count * NRanks * S);
    for (size_t I = 0; I < Count * NRanks; ++I) /* block j to rank j: 10 * me + j */
      put(Sent, T, I, (unsigned)(10 * Rank + I / Count));
    CHECK(ncclAlltoAll(Sent, All, Count, T, Comm, 0));
    for (size_t I = 0; I < Count * NRanks; ++I)
      expect(holds(All, T, I, (unsigned)(10 * (I / Count) + Rank)), "alltoall", I);
    for (size_t I = 0; I < Count; ++I)
      put(Mine, T, I, (unsigned)(Rank + 1));
    memset(All, 0, Count * NRanks * S);
    CHECK(ncclGather(Mine, All, Count, T, Root, Comm, 0));
    for (size_t I = 0; Rank == Root && I < Count * NRanks; ++I)
      expect(holds(All, T, I, (unsigned)(I / Count + 1)), "gather", I);
    CHECK(ncclScatter(Sent, Got, Count, T, Root, Comm, 0));
    for (size_t I = 0; I < Count; ++I)
      expect(holds(Got, T, I, (unsigned)(10 * Root + Rank)), "scatter", I);
    free(Mine);
    free(All);
    free(Got);
    free(Sent);
  }
  /* allgather into memory from ncclMemAlloc, in messages large enough to be
   * written straight into it */
  const size_t Large = 1 << 16;
  float *Mine = NULL, *All = NULL;
  CHECK(ncclMemAlloc((void **)&Mine, Large * sizeof(float)));
  CHECK(ncclMemAlloc((void **)&All, Large * NRanks * sizeof(float)));
  for (size_t I = 0; I < Large; ++I)
    Mine[I] = (float)(Rank * 7 + I % 5);
  CHECK(ncclAllGather(Mine, All, Large, ncclFloat32, Comm, 0));
  for (size_t I = 0; I < Large * NRanks; ++I)
    expect(All[I] == (float)(I / Large * 7 + I % Large % 5), "allgather into ncclMemAlloc", I);
  CHECK(ncclMemFree(Mine));
  CHECK(ncclMemFree(All));
}

static void groups(ncclComm_t Comm) {
  const size_t Count = 100000;
  float *A = (float *)malloc(Count * 4), *B = (float *)malloc(Count * 4 * NRanks);
  float *C = (float *)malloc(Count * 4), *Ring = (float *)malloc(Count * 4);
  float *Out = (float *)malloc(Count * 4), *Bc = (float *)malloc(Count * 4);
  for (int Round = 0; Round < 3; ++Round) {
    for (size_t I = 0; I < Count; ++I)
      A[I] = C[I] = Out[I] = Bc[I] = (float)(Rank + Round);
    /* three collectives and a ring exchange, fused in one group (on
     * buffers of their own: a group's calls run concurrently in NCCL) */
    CHECK(ncclGroupStart());
    CHECK(ncclAllReduce(A, A, Count, ncclFloat32, ncclSum, Comm, 0));
    CHECK(ncclAllGather(C, B, Count, ncclFloat32, Comm, 0));
    CHECK(ncclGroupStart()); /* groups nest */
    CHECK(ncclRecv(Ring, Count, ncclFloat32, (Rank + NRanks - 1) % NRanks, Comm, 0));
    CHECK(ncclSend(Out, Count, ncclFloat32, (Rank + 1) % NRanks, Comm, 0));
    CHECK(ncclGroupEnd());
    CHECK(ncclBroadcast(Bc, Bc, Count, ncclFloat32, 0, Comm, 0));
    CHECK(ncclGroupEnd());
    float Sum = (float)(NRanks * Round + NRanks * (NRanks - 1) / 2);
    for (size_t I = 0; I < Count; ++I) {
      expect(A[I] == Sum, "grouped allreduce", I);
      expect(Bc[I] == (float)Round, "grouped broadcast", I);
      expect(Ring[I] == (float)((Rank + NRanks - 1) % NRanks + Round), "ring recv", I);
    }
    for (size_t I = 0; I < Count * NRanks; ++I)
      expect(B[I] == (float)(I / Count + Round), "grouped allgather", I);
  }
  free(A);
  free(B);
  free(C);
  free(Ring);
  free(Out);
  free(Bc);
}

static void split(ncclComm_t Comm) {
  ncclComm_t Half;
  /* two colors; keys reverse the order inside each */
  CHECK(ncclCommSplit(Comm, Rank % 2, -Rank, &Half, NULL));
  int Count, Mine;
  CHECK(ncclCommCount(Half, &Count));
  CHECK(ncclCommUserRank(Half, &Mine));
  int Expected = (NRanks - Rank % 2 + 1) / 2;
  if (Count != Expected || Mine != Expected - 1 - Rank / 2)
    printf("rank %d: split gave rank %d of %d\n", Rank, Mine, Count), ++Failures;
  int Value = Rank, Sum = 0;
  CHECK(ncclAllReduce(&Value, &Sum, 1, ncclInt32, ncclSum, Half, 0));
  int Want = 0;
  for (int R = Rank % 2; R < NRanks; R += 2)
    Want += R;
  expect(Sum == Want, "allreduce on a split", 0);
  CHECK(ncclCommDestroy(Half));
  /* rank 0 opts out */
  ncclComm_t Rest;
  CHECK(ncclCommSplit(Comm, Rank == 0 ? NCCL_SPLIT_NOCOLOR : 7, 0, &Rest, NULL));
  expect((Rest == NULL) == (Rank == 0), "NCCL_SPLIT_NOCOLOR", 0);
  if (Rest)
    CHECK(ncclCommDestroy(Rest));
}

static void errors(ncclComm_t Comm) {
  float X = 1;
  struct {
    ncclResult_t Got, Want;
    const char *What;
  } Cases[] = {
      {ncclAllReduce(&X, &X, 1, ncclFloat32, ncclSum, NULL, 0), ncclInvalidArgument, "null comm"},
      {ncclAllReduce(&X, &X, 1, ncclFloat8e4m3, ncclSum, Comm, 0), ncclInvalidArgument, "fp8"},
      {ncclAllReduce(&X, &X, 1, ncclFloat32, (ncclRedOp_t)77, Comm, 0), ncclInvalidArgument,
       "operator"},
      {ncclBroadcast(&X, &X, 1, ncclFloat32, NRanks, Comm, 0), ncclInvalidArgument, "root"},
      {ncclSend(&X, 1, ncclFloat32, -1, Comm, 0), ncclInvalidArgument, "peer"},
      {ncclGroupEnd(), ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart"},
      {ncclRedOpDestroy(ncclSum, Comm), ncclInvalidArgument, "destroying ncclSum"},
  };
  for (size_t I = 0; I < sizeof Cases / sizeof Cases[0]; ++I)
    if (Cases[I].Got != Cases[I].Want || !*ncclGetLastError(NULL))
      printf("rank %d: %s returned %d\n", Rank, Cases[I].What, (int)Cases[I].Got), ++Failures;
  /* refusals leave the communicator working */
  CHECK(ncclAllReduce(&X, &X, 1, ncclFloat32, ncclSum, Comm, 0));
  expect(X == (float)NRanks, "allreduce after refusals", 0);
  int Version;
  CHECK(ncclGetVersion(&Version));
  expect(Version == NCCL_VERSION_CODE, "ncclGetVersion", 0);
}

/* The 8-bit float holding the small integer V (exact up to 4 in both). */
static unsigned char float8Bits(ncclDataType_t T, unsigned V) {
  int E4M3 = T == ncclFloat8e4m3, MantBits = E4M3 ? 3 : 2, Bias = E4M3 ? 7 : 15;
  if (V == 0)
    return 0;
  int E = 0;
  while ((V >> (E + 1)) != 0)
    ++E;
  return (unsigned char)(((E + Bias) << MantBits) |
                         (((V << MantBits) >> E) & ((1u << MantBits) - 1)));
}

static void fp8(ncclComm_t Comm) {
  enum { N = 256 };
  static const ncclDataType_t Float8[] = {ncclFloat8e4m3, ncclFloat8e5m2};
  unsigned char In[N], Out[N];
  for (int K = 0; K < 2; ++K) {
    ncclDataType_t T = Float8[K];
    for (size_t I = 0; I < N; ++I)
      In[I] = float8Bits(T, (unsigned)((Rank + I) % 2));
    CHECK(ncclAllReduce(In, Out, N, T, ncclSum, Comm, 0));
    for (size_t I = 0; I < N; ++I) {
      unsigned Sum = 0;
      for (int R = 0; R < NRanks; ++R)
        Sum += (unsigned)((R + I) % 2);
      expect(Out[I] == float8Bits(T, Sum), K ? "e5m2 allreduce" : "e4m3 allreduce", I);
    }
    /* moving 8-bit floats needs no arithmetic */
    for (size_t I = 0; I < N; ++I)
      Out[I] = Rank == 1 ? float8Bits(T, (unsigned)(I % 5)) : 0;
    CHECK(ncclBroadcast(Out, Out, N, T, 1, Comm, 0));
    for (size_t I = 0; I < N; ++I)
      expect(Out[I] == float8Bits(T, (unsigned)(I % 5)), "8-bit float broadcast", I);
  }
  /* twice, so that a log says once per kind of call which library serves it */
  for (int Round = 0; Round < 2; ++Round) {
    float X[N];
    for (size_t I = 0; I < N; ++I)
      X[I] = (float)(Rank + I);
    CHECK(ncclAllReduce(X, X, N, ncclFloat32, ncclSum, Comm, 0));
    for (size_t I = 0; I < N; ++I)
      expect(X[I] == (float)(NRanks * I + NRanks * (NRanks - 1) / 2), "float32 allreduce", I);
  }
}

static void *stuckAllReduce(void *Comm) {
  static float X[1 << 16];
  ncclResult_t R = ncclAllReduce(X, X, 1 << 16, ncclFloat32, ncclSum, (ncclComm_t)Comm, 0);
  printf("rank %d: the stuck allreduce returned %s\n", Rank,
         R == ncclSuccess ? "success" : "an error");
  return NULL;
}

static void waitForAsyncError(ncclComm_t Comm) {
  ncclResult_t Async = ncclSuccess;
  for (int Tries = 0; Tries < 3000 && Async == ncclSuccess; ++Tries) {
    CHECK(ncclCommGetAsyncError(Comm, &Async));
    usleep(10000);
  }
  printf("rank %d: asynchronous error: %s\n", Rank, ncclGetErrorString(Async));
}

/* Says how a call on a failed communicator ended, waits until the
 * communicator reports the failure, and aborts it. */
static void endFailed(ncclComm_t Comm, const char *What, ncclResult_t R) {
  printf("rank %d: %s: %s\n", Rank, What, ncclGetErrorString(R));
  waitForAsyncError(Comm);
  CHECK(ncclCommAbort(Comm));
}

static int runRank(ncclUniqueId Id, const char *Case) {
  ncclComm_t Comm = NULL;
  if (!strcmp(Case, "initfails")) {
    ncclResult_t R = ncclCommInitRank(&Comm, NRanks, Id, Rank);
    printf("rank %d: ncclCommInitRank: %s: %s\n", Rank, ncclGetErrorString(R),
           ncclGetLastError(NULL));
    int Refused = R != ncclSuccess && *ncclGetLastError(NULL);
    ncclCommDestroy(Comm);
    if (Refused)
      printf("rank %d: initfails ok\n", Rank);
    return Refused ? 0 : 1;
  }
  CHECK(ncclCommInitRank(&Comm, NRanks, Id, Rank));
  if (!strcmp(Case, "collectives"))
    collectives(Comm);
  else if (!strcmp(Case, "groups"))
    groups(Comm);
  else if (!strcmp(Case, "split"))
    split(Comm);
  else if (!strcmp(Case, "errors"))
    errors(Comm);
  else if (!strcmp(Case, "fp8"))
    fp8(Comm);
  else if (!strcmp(Case, "abort")) {
    /* rank 0 enters an allreduce nobody else joins, and aborts it from
     * another thread */
    if (Rank == 0) {
      pthread_t Stuck;
      pthread_create(&Stuck, NULL, stuckAllReduce, Comm);
      usleep(300000);
      CHECK(ncclCommAbort(Comm));
      pthread_join(Stuck, NULL);
    } else {
      /* after the abort, a call of the peers fails, and so does their
       * communicator */
      usleep(1000000);
      float X[16] = {0};
      endFailed(Comm, "allreduce after the abort",
                ncclAllReduce(X, X, 16, ncclFloat32, ncclSum, Comm, 0));
    }
    printf("rank %d: abort done\n", Rank);
    return 0;
  } else if (!strcmp(Case, "killed")) {
    if (Rank == NRanks - 1)
      _exit(3);
    float X[1024] = {0};
    endFailed(Comm, "allreduce with a dead rank",
              ncclAllReduce(X, X, 1024, ncclFloat32, ncclSum, Comm, 0));
    return 0;
  }
  CHECK(ncclCommDestroy(Comm));
  if (!Failures)
    printf("rank %d: %s ok\n", Rank, Case);
  return Failures ? 1 : 0;
}

static int initAll(void) {
  ncclComm_t Comms[8];
  CHECK(ncclCommInitAll(Comms, NRanks, NULL));
  float *Data[8];
  CHECK(ncclGroupStart());
  for (int R = 0; R < NRanks; ++R) {
    Data[R] = (float *)malloc(4096 * 4);
    for (int I = 0; I < 4096; ++I)
      Data[R][I] = (float)(R + I);
    CHECK(ncclAllReduce(Data[R], Data[R], 4096, ncclFloat32, ncclSum, Comms[R], 0));
  }
  CHECK(ncclGroupEnd());
  for (int R = 0; R < NRanks; ++R) {
    int Mine, Count;
    CHECK(ncclCommUserRank(Comms[R], &Mine));
    CHECK(ncclCommCount(Comms[R], &Count));
    expect(Mine == R && Count == NRanks, "ncclCommInitAll's ranks", (size_t)R);
    for (int I = 0; I < 4096; ++I)
      expect(Data[R][I] == (float)(NRanks * I + NRanks * (NRanks - 1) / 2), "initall", (size_t)I);
    free(Data[R]);
  }
  CHECK(ncclGroupStart());
  for (int R = 0; R < NRanks; ++R)
    CHECK(ncclCommDestroy(Comms[R]));
  CHECK(ncclGroupEnd());
  if (!Failures)
    printf("initall ok\n");
  return Failures ? 1 : 0;
}

int main(int Argc, char **Argv) {
  if (Argc != 3 || atoi(Argv[1]) < 1 || atoi(Argv[1]) > 8) {
    fprintf(stderr, "usage: %s NRANKS(1-8) CASE\n", Argv[0]);
    return 2;
  }
  NRanks = atoi(Argv[1]);
  setvbuf(stdout, NULL, _IOLBF, 0);
  alarm(120); /* nothing here may hang */
  if (!strcmp(Argv[2], "initall"))
    return initAll();
  ncclUniqueId Id;
  CHECK(ncclGetUniqueId(&Id));
  pid_t Children[8];
  for (Rank = 0; Rank < NRanks; ++Rank) {
    Children[Rank] = fork();
    if (Children[Rank] == 0) {
      alarm(120);
      exit(runRank(Id, Argv[2]));
    }
  }
  int Status = 0;
  for (int R = 0; R < NRanks; ++R) {
    int Code;
    waitpid(Children[R], &Code, 0);
    int Exit = WIFEXITED(Code) ? WEXITSTATUS(Code) : 128 + WTERMSIG(Code);
    printf("rank %d exited %d\n", R, Exit);
    if (Exit != 0 && !(Exit == 3 && !strcmp(Argv[2], "killed") && R == NRanks - 1))
      Status = 1;
  }
  return Status;
}
