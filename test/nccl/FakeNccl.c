/*===- FakeNccl.c - A stand-in for the real NCCL, for forwarding tests ---===*\
|*                                                                            *|
|* Exports the entry points cclc's NCCL library forwards to, so that the     *|
|* forwarding is tested on machines without a GPU, where the real NCCL       *|
|* cannot make a communicator. Each call appends a line naming itself to the *|
|* file FAKE_NCCL_LOG names. ncclAllReduce sums host buffers of float32 and  *|
|* the 8-bit floats across the ranks through files in the job's directory,  *|
|* a fresh one under FAKE_NCCL_DIR that the unique id carries, so that the   *|
|* ranks check the results of what was forwarded. The other collectives are *|
|* recorded and refused.                                                     *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#include <nccl.h>

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct ncclComm {
  char Dir[NCCL_UNIQUE_ID_BYTES];
  int Rank, NRanks;
  unsigned long Calls;
};

static char LastError[256];

static ncclResult_t refuse(ncclResult_t Result, const char *Message) {
  snprintf(LastError, sizeof LastError, "fake NCCL: %s", Message);
  return Result;
}

/* Appends one line to FAKE_NCCL_LOG, in one write, so that ranks' lines do
 * not mix. */
static void record(const char *Format, ...) {
  const char *Path = getenv("FAKE_NCCL_LOG");
  if (!Path)
    return;
  char Line[256];
  va_list Args;
  va_start(Args, Format);
  int N = vsnprintf(Line, sizeof Line - 1, Format, Args);
  va_end(Args);
  if (N < 0 || N > (int)sizeof Line - 2)
    N = (int)sizeof Line - 2;
  Line[N++] = '\n';
  int Fd = open(Path, O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (Fd >= 0) {
    if (write(Fd, Line, (size_t)N) != N)
      perror("fake NCCL: writing FAKE_NCCL_LOG");
    close(Fd);
  }
}

static const char *typeName(ncclDataType_t T) {
  switch (T) {
  case ncclFloat32: return "float32";
  case ncclFloat8e4m3: return "float8e4m3";
  case ncclFloat8e5m2: return "float8e5m2";
  default: return "another type";
  }
}

/* The value of an 8-bit float: E4M3 (exponent bias 7, no infinities) or
 * E5M2 (bias 15). */
static float decode(unsigned char B, int E4M3) {
  int MantBits = E4M3 ? 3 : 2, Bias = E4M3 ? 7 : 15;
  int E = (B & 0x7f) >> MantBits, M = B & ((1 << MantBits) - 1);
  float V = E ? ldexpf(1.0f + (float)M / (float)(1 << MantBits), E - Bias)
              : ldexpf((float)M / (float)(1 << MantBits), 1 - Bias);
  return (B & 0x80) ? -V : V;
}

/* The finite 8-bit float nearest V. */
static unsigned char encode(float V, int E4M3) {
  unsigned char Best = 0;
  for (int B = 0; B < 256; ++B) {
    float D = decode((unsigned char)B, E4M3);
    if (isfinite(D) && !(E4M3 && (B & 0x7f) == 0x7f) &&
        fabsf(D - V) < fabsf(decode(Best, E4M3) - V))
      Best = (unsigned char)B;
  }
  return Best;
}

static float load(const void *Buffer, ncclDataType_t T, size_t I) {
  if (T == ncclFloat32)
    return ((const float *)Buffer)[I];
  return decode(((const unsigned char *)Buffer)[I], T == ncclFloat8e4m3);
}

static void store(void *Buffer, ncclDataType_t T, size_t I, float V) {
  if (T == ncclFloat32)
    ((float *)Buffer)[I] = V;
  else
    ((unsigned char *)Buffer)[I] = encode(V, T == ncclFloat8e4m3);
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *Id) {
  const char *Root = getenv("FAKE_NCCL_DIR");
  if (!Root)
    return refuse(ncclInvalidUsage, "FAKE_NCCL_DIR is not set");
  memset(Id, 0, sizeof *Id);
  snprintf(Id->internal, sizeof Id->internal, "%s/jobXXXXXX", Root);
  if (strlen(Id->internal) + 1 >= sizeof Id->internal || !mkdtemp(Id->internal))
    return refuse(ncclSystemError, "cannot make the job's directory under FAKE_NCCL_DIR");
  record("ncclGetUniqueId");
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *Comm, int NRanks, ncclUniqueId Id, int Rank) {
  if (access(Id.internal, W_OK) != 0)
    return refuse(ncclInvalidArgument, "the unique id names no job directory");
  *Comm = (ncclComm_t)calloc(1, sizeof(struct ncclComm));
  memcpy((*Comm)->Dir, Id.internal, sizeof Id.internal);
  (*Comm)->Rank = Rank;
  (*Comm)->NRanks = NRanks;
  record("rank %d: ncclCommInitRank %d ranks", Rank, NRanks);
  return ncclSuccess;
}

static ncclResult_t end(ncclComm_t Comm, const char *How) {
  record("rank %d: %s", Comm->Rank, How);
  free(Comm);
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t Comm) { return end(Comm, "ncclCommDestroy"); }
ncclResult_t ncclCommAbort(ncclComm_t Comm) { return end(Comm, "ncclCommAbort"); }

ncclResult_t ncclCommFinalize(ncclComm_t Comm) {
  record("rank %d: ncclCommFinalize", Comm->Rank);
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t Comm, ncclResult_t *Async) {
  (void)Comm;
  *Async = ncclSuccess;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t Result) {
  return Result == ncclSuccess ? "no error" : "fake NCCL error";
}

const char *ncclGetLastError(ncclComm_t Comm) {
  (void)Comm;
  return LastError;
}

/* Writes this rank's Bytes of Send as the call's file, then reads every
 * rank's into All (NRanks x Bytes) once they are all there, for 20 s at most. */
static ncclResult_t exchange(ncclComm_t C, const void *Send, size_t Bytes, char *All) {
  char Path[256], Temp[300];
  unsigned long Call = C->Calls++;
  snprintf(Path, sizeof Path, "%s/call%lu.rank%d", C->Dir, Call, C->Rank);
  snprintf(Temp, sizeof Temp, "%s.part", Path);
  FILE *F = fopen(Temp, "wb");
  if (!F || fwrite(Send, 1, Bytes, F) != Bytes || fclose(F) != 0 || rename(Temp, Path) != 0)
    return refuse(ncclSystemError, "cannot write the call's file");
  for (int R = 0; R < C->NRanks; ++R) {
    snprintf(Path, sizeof Path, "%s/call%lu.rank%d", C->Dir, Call, R);
    for (int Tries = 0; access(Path, R_OK) != 0; ++Tries) {
      if (Tries == 20000)
        return refuse(ncclRemoteError, "a rank never wrote its share of the call");
      struct timespec Ms = {0, 1000000};
      nanosleep(&Ms, NULL);
    }
    F = fopen(Path, "rb");
    size_t Got = F ? fread(All + (size_t)R * Bytes, 1, Bytes, F) : 0;
    if (F)
      fclose(F);
    if (Got != Bytes)
      return refuse(ncclSystemError, "a rank's share of the call is short");
  }
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *Send, void *Recv, size_t Count, ncclDataType_t Type,
                           ncclRedOp_t Op, ncclComm_t C, cudaStream_t Stream) {
  (void)Stream;
  record("rank %d: ncclAllReduce %s count %zu", C->Rank, typeName(Type), Count);
  if (Op != ncclSum ||
      (Type != ncclFloat32 && Type != ncclFloat8e4m3 && Type != ncclFloat8e5m2))
    return refuse(ncclInvalidUsage, "the test double sums float32 and 8-bit floats only");
  size_t Bytes = Count * (Type == ncclFloat32 ? 4 : 1);
  char *All = (char *)malloc(Bytes * (size_t)C->NRanks + 1);
  ncclResult_t Result = exchange(C, Send, Bytes, All);
  for (size_t I = 0; I < Count && Result == ncclSuccess; ++I) {
    float Sum = 0;
    for (int R = 0; R < C->NRanks; ++R)
      Sum += load(All + (size_t)R * Bytes, Type, I);
    store(Recv, Type, I, Sum);
  }
  free(All);
  return Result;
}

static ncclResult_t unserved(ncclComm_t C, const char *Call) {
  record("rank %d: %s", C->Rank, Call);
  return refuse(ncclInvalidUsage, "the test double serves ncclAllReduce only");
}

ncclResult_t ncclReduce(const void *Send, void *Recv, size_t Count, ncclDataType_t Type,
                        ncclRedOp_t Op, int Root, ncclComm_t C, cudaStream_t Stream) {
  (void)Send, (void)Recv, (void)Count, (void)Type, (void)Op, (void)Root, (void)Stream;
  return unserved(C, "ncclReduce");
}

ncclResult_t ncclReduceScatter(const void *Send, void *Recv, size_t Count, ncclDataType_t Type,
                               ncclRedOp_t Op, ncclComm_t C, cudaStream_t Stream) {
  (void)Send, (void)Recv, (void)Count, (void)Type, (void)Op, (void)Stream;
  return unserved(C, "ncclReduceScatter");
}

ncclResult_t ncclBroadcast(const void *Send, void *Recv, size_t Count, ncclDataType_t Type,
                           int Root, ncclComm_t C, cudaStream_t Stream) {
  (void)Send, (void)Recv, (void)Count, (void)Type, (void)Root, (void)Stream;
  return unserved(C, "ncclBroadcast");
}

ncclResult_t ncclAllGather(const void *Send, void *Recv, size_t Count, ncclDataType_t Type,
                           ncclComm_t C, cudaStream_t Stream) {
  (void)Send, (void)Recv, (void)Count, (void)Type, (void)Stream;
  return unserved(C, "ncclAllGather");
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *Op, void *Scalar, ncclDataType_t Type,
                                      ncclScalarResidence_t Residence, ncclComm_t C) {
  (void)Scalar, (void)Type, (void)Residence;
  record("rank %d: ncclRedOpCreatePreMulSum", C->Rank);
  *Op = (ncclRedOp_t)ncclNumOps;
  return ncclSuccess;
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t Op, ncclComm_t C) {
  record("rank %d: ncclRedOpDestroy %d", C->Rank, (int)Op);
  return ncclSuccess;
}
