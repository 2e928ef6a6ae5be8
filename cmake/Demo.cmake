# The README's main job, run by the `demo` target: cclc on the shipped defaults.
execute_process(COMMAND ${CCLC} --version RESULT_VARIABLE Status)
if(NOT Status EQUAL 0)
  message(FATAL_ERROR "cclc failed")
endif()
