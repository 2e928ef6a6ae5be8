# cclc_add_algorithms: compiles .ccl algorithms into kernels at build time and
# links them into a target.
#
#   cclc_add_algorithms(TARGET <target>
#                       ALGORITHMS <file.ccl>...
#                       [TOPO <topo.xml> [NODES <n>]] | [NRANKS <n>]
#                       [TARGETS host|cuda...]      # default: host
#                       [DTYPES f32|f64|f16|bf16|i8|u8|i32|u32|i64|u64...]  # default: f32
#                       [OPS sum|prod|min|max...]   # default: sum
#                       [OPTIONS <more cclc compile arguments>...])
#
# For each algorithm and kernel target, `cclc compile --emit=<target>` writes
# <stem>.h/.cpp (host) or <stem>.cuh/.cu (cuda) under the build directory;
# the sources are added to <target>, their directory to its include path, and
# the template library to its link libraries. The kernels are regenerated when
# the .ccl file, the topology or cclc itself changes. A cuda target needs the
# CUDA language enabled in the calling project.
function(cclc_add_algorithms)
  cmake_parse_arguments(ARG "" "TARGET;TOPO;NODES;NRANKS" "ALGORITHMS;TARGETS;DTYPES;OPS;OPTIONS"
                        ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cclc_add_algorithms: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_TARGET OR NOT TARGET ${ARG_TARGET})
    message(FATAL_ERROR "cclc_add_algorithms: TARGET must name an existing target")
  endif()
  if(NOT ARG_ALGORITHMS)
    message(FATAL_ERROR "cclc_add_algorithms: ALGORITHMS lists no .ccl file")
  endif()
  if(ARG_TOPO AND ARG_NRANKS)
    message(FATAL_ERROR "cclc_add_algorithms: give TOPO or NRANKS, not both")
  endif()
  if(NOT ARG_TOPO AND NOT ARG_NRANKS)
    message(FATAL_ERROR "cclc_add_algorithms: give TOPO <topo.xml> or NRANKS <n>")
  endif()
  if(NOT ARG_TARGETS)
    set(ARG_TARGETS host)
  endif()
  if(NOT ARG_DTYPES)
    set(ARG_DTYPES f32)
  endif()
  if(NOT ARG_OPS)
    set(ARG_OPS sum)
  endif()

  set(Machine)
  set(MachineDeps)
  if(ARG_TOPO)
    get_filename_component(Topo "${ARG_TOPO}" ABSOLUTE)
    list(APPEND Machine --topo "${Topo}")
    list(APPEND MachineDeps "${Topo}")
    if(ARG_NODES)
      list(APPEND Machine --nodes ${ARG_NODES})
    endif()
  else()
    list(APPEND Machine --nranks ${ARG_NRANKS})
  endif()
  string(REPLACE ";" "," DTypes "${ARG_DTYPES}")
  string(REPLACE ";" "," Ops "${ARG_OPS}")

  set(OutDir "${CMAKE_CURRENT_BINARY_DIR}/cclc-kernels/${ARG_TARGET}")
  foreach(Algorithm IN LISTS ARG_ALGORITHMS)
    get_filename_component(Source "${Algorithm}" ABSOLUTE)
    if(NOT EXISTS "${Source}")
      message(FATAL_ERROR "cclc_add_algorithms: ${Algorithm} does not exist")
    endif()
    get_filename_component(Stem "${Source}" NAME_WE)
    foreach(KernelTarget IN LISTS ARG_TARGETS)
      if(KernelTarget STREQUAL "host")
        set(Outputs "${OutDir}/${Stem}.h" "${OutDir}/${Stem}.cpp")
      elseif(KernelTarget STREQUAL "cuda")
        set(Outputs "${OutDir}/${Stem}.cuh" "${OutDir}/${Stem}.cu")
      else()
        message(FATAL_ERROR "cclc_add_algorithms: TARGETS takes host and cuda, not '${KernelTarget}'")
      endif()
      add_custom_command(
        OUTPUT ${Outputs}
        COMMAND cclc::cclc compile "${Source}" ${Machine} --emit=${KernelTarget}
                --dtypes ${DTypes} --ops ${Ops} ${ARG_OPTIONS} -o "${OutDir}"
        DEPENDS "${Source}" ${MachineDeps} cclc::cclc
        COMMENT "cclc: generating ${KernelTarget} kernels for ${Stem}"
        VERBATIM)
      target_sources(${ARG_TARGET} PRIVATE ${Outputs})
    endforeach()
  endforeach()
  target_include_directories(${ARG_TARGET} PRIVATE "${OutDir}")
  target_link_libraries(${ARG_TARGET} PRIVATE cclc::templates)
  # The runtime launches registered CUDA kernels through the shared CUDA
  # runtime; kernels registered with a static copy of it would be unknown there.
  if("cuda" IN_LIST ARG_TARGETS)
    set_property(TARGET ${ARG_TARGET} PROPERTY CUDA_RUNTIME_LIBRARY Shared)
  endif()
endfunction()
