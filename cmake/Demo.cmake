# The README's main job, run by the `demo` target on what the project ships:
# check the algorithm library, search the bundled 8-GPU machine whose GPU0-GPU1
# NVLink is broken, compile the butterfly allreduce for it, explain the
# predicted performance of the library's allreduces there, then compile the
# butterfly and the ring into plans for 4 ranks and run them on 4 local
# processes, checking every element and printing nccl-tests' figures.
set(Topology ${SOURCE_DIR}/test/topologies/mesh8-broken-0-1.xml)
file(GLOB Algorithms ${SOURCE_DIR}/algorithms/*.ccl)

function(run Title)
  message(STATUS "")
  message(STATUS "== ${Title}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE Status)
  if(NOT Status EQUAL 0)
    message(FATAL_ERROR "failed (status ${Status}): ${ARGN}")
  endif()
endfunction()

run("cclc check algorithms/*.ccl" ${CCLC} check ${Algorithms})
run("cclc topo mesh8-broken-0-1.xml" ${CCLC} topo ${Topology} --emit=text)
run("cclc compile butterfly-allreduce.ccl for mesh8-broken-0-1.xml (remap keeps GPU0-GPU1 idle)"
    ${CCLC} compile ${SOURCE_DIR}/algorithms/butterfly-allreduce.ccl --topo ${Topology}
    --channels 1 --emit=schedule)
run("cclc compile ring-allreduce.ccl --explain: predicted time per size, crossovers"
    ${CCLC} compile ${SOURCE_DIR}/algorithms/ring-allreduce.ccl --topo ${Topology}
    --explain --algorithms ${SOURCE_DIR}/algorithms -o /dev/null)

set(PlanDir ${BINARY_DIR}/demo)
file(MAKE_DIRECTORY ${PlanDir})
run("cclc compile butterfly-allreduce.ccl into a plan for 4 ranks"
    ${CCLC} compile ${SOURCE_DIR}/algorithms/butterfly-allreduce.ccl --nranks 4 --emit=json
    -o ${PlanDir}/butterfly-allreduce.json)
run("cclc compile ring-allreduce.ccl into a plan for 4 ranks" ${CCLC} compile ${SOURCE_DIR}/algorithms/ring-allreduce.ccl --nranks 4 --emit=json
    -o ${PlanDir}/ring-allreduce.json)
# 100 timed calls a size: where the 4 ranks outnumber the cores, a rank the
# scheduler sets aside costs milliseconds, which 10 calls would report as the
# call's time (10 to 800 us for 8 bytes from run to run on 2 cores).
run("cclc-perf allreduce -np 4: the plans on 4 local processes, results checked (#wrong)"
    ${CCLC_PERF} allreduce -np 4 -b 8 -e 16M -f 16 -n 100 -w 10 -c 1
    --plan ${PlanDir}/butterfly-allreduce.json --plan ${PlanDir}/ring-allreduce.json)
