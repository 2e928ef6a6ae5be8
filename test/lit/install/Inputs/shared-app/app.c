/* A C program built against the installed libcclc.so through pkg-config:
 * forks NRANKS ranks, hands rank 0's unique id to the others over a pipe, and
 * all-reduces each rank's number. Prints the sum each rank got. */
#include <cclc.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NRANKS 3

static int rankMain(int rank, int readFd, int writeFds[NRANKS]) {
  cclcUniqueId id;
  if (rank == 0) {
    if (cclcGetUniqueId(&id) != cclcSuccess)
      return fprintf(stderr, "cclcGetUniqueId: %s\n", cclcGetLastError(NULL)), 1;
    for (int r = 1; r < NRANKS; ++r)
      if (write(writeFds[r], &id, sizeof id) != sizeof id)
        return perror("write"), 1;
  } else if (read(readFd, &id, sizeof id) != sizeof id) {
    return perror("read"), 1;
  }
  cclcComm_t comm;
  if (cclcCommInitRank(&comm, NRANKS, id, rank) != cclcSuccess)
    return fprintf(stderr, "cclcCommInitRank: %s\n", cclcGetLastError(NULL)), 1;
  double value = rank + 1;
  if (cclcAllReduce(&value, &value, 1, cclcFloat64, cclcSum, comm, NULL) != cclcSuccess)
    return fprintf(stderr, "cclcAllReduce: %s\n", cclcGetLastError(comm)), 1;
  printf("rank %d: sum %g\n", rank, value);
  fflush(stdout);
  return cclcCommDestroy(comm) != cclcSuccess;
}

int main(void) {
  int fds[NRANKS][2], writeFds[NRANKS];
  for (int r = 0; r < NRANKS; ++r) {
    if (pipe(fds[r]) != 0)
      return perror("pipe"), 1;
    writeFds[r] = fds[r][1];
  }
  pid_t pids[NRANKS];
  for (int r = 0; r < NRANKS; ++r)
    if ((pids[r] = fork()) == 0)
      _exit(rankMain(r, fds[r][0], writeFds));
  int failed = 0;
  for (int r = 0; r < NRANKS; ++r) {
    int status = 0;
    waitpid(pids[r], &status, 0);
    failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  return failed;
}
