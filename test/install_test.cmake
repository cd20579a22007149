# Installs the build tree into a scratch prefix and builds install_consumer/ against it with
# find_package(h5zgpu). Variables: BUILD_DIR WORK_DIR CONSUMER GENERATOR C_COMPILER.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${CONSUMER} -B ${WORK_DIR}/consumer -G ${GENERATOR}
    -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
run(${WORK_DIR}/consumer/consumer)
# a prefix other than /usr/local given to `cmake --install` alone: the plugin goes with the
# libraries (docs/FILTER.md, "Installing"), when the build made one
file(GLOB plugin_built ${BUILD_DIR}/plugin/libh5zgpu_filter.so)
if(plugin_built AND NOT EXISTS ${prefix}/lib/hdf5/plugin/libh5zgpu_filter.so)
  message(FATAL_ERROR "the plugin is not in ${prefix}/lib/hdf5/plugin")
endif()
if(NOT EXISTS ${prefix}/include/h5zgpu.h)
  message(FATAL_ERROR "h5zgpu.h was not installed")
endif()
