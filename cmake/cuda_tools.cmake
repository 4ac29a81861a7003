# Optional CUDA tooling built with the host compiler: the CUPTI activity injection library
# (libmagpie_cupti.so) that records every kernel launch of a child process. Needs cupti.h
# and libcupti.so at build time; it is loaded by the CUDA driver through
# CUDA_INJECTION64_PATH, so the magpie binary itself has no CUDA dependency.
#
# Search order: -DMAGPIE_CUDA_ROOT=..., $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /usr/local/cuda-13.0,
# /usr/local/cuda-12*; headers in include/, extras/CUPTI/include, targets/<arch>-linux/include;
# libraries in lib/, lib64/, extras/CUPTI/lib64, targets/<arch>-linux/lib.
set(MAGPIE_CUDA_ROOT "" CACHE PATH "CUDA toolkit root for the CUPTI injection library (empty: search)")
set(_magpie_cuda_roots)
foreach(_root "${MAGPIE_CUDA_ROOT}" "$ENV{CUDA_HOME}" "$ENV{CUDA_PATH}" /usr/local/cuda /usr/local/cuda-13.0)
  if(_root AND IS_DIRECTORY "${_root}")
    list(APPEND _magpie_cuda_roots "${_root}")
  endif()
endforeach()
file(GLOB _magpie_cuda12 LIST_DIRECTORIES true /usr/local/cuda-12*)
list(APPEND _magpie_cuda_roots ${_magpie_cuda12})
set(_magpie_inc_dirs)
set(_magpie_lib_dirs)
foreach(_root ${_magpie_cuda_roots})
  list(APPEND _magpie_inc_dirs ${_root}/include ${_root}/extras/CUPTI/include
       ${_root}/targets/${CMAKE_SYSTEM_PROCESSOR}-linux/include)
  list(APPEND _magpie_lib_dirs ${_root}/lib ${_root}/lib64 ${_root}/extras/CUPTI/lib64
       ${_root}/targets/${CMAKE_SYSTEM_PROCESSOR}-linux/lib)
endforeach()
find_path(MAGPIE_CUPTI_INCLUDE cupti.h PATHS ${_magpie_inc_dirs} NO_DEFAULT_PATH)
find_library(MAGPIE_CUPTI_LIB NAMES cupti PATHS ${_magpie_lib_dirs} NO_DEFAULT_PATH)
# cupti.h includes cuda.h: take the toolkit include directory that holds it.
find_path(MAGPIE_CUDA_INCLUDE cuda.h PATHS ${_magpie_inc_dirs} NO_DEFAULT_PATH)
if(MAGPIE_CUPTI_INCLUDE AND MAGPIE_CUPTI_LIB AND MAGPIE_CUDA_INCLUDE AND EXISTS ${PROJECT_SOURCE_DIR}/src/cupti/magpie_cupti.cpp)
  message(STATUS "CUPTI found: building libmagpie_cupti.so (${MAGPIE_CUPTI_LIB})")
  add_library(magpie_cupti SHARED ${PROJECT_SOURCE_DIR}/src/cupti/magpie_cupti.cpp)
  target_include_directories(magpie_cupti PRIVATE ${MAGPIE_CUPTI_INCLUDE} ${MAGPIE_CUDA_INCLUDE})
  target_link_libraries(magpie_cupti PRIVATE ${MAGPIE_CUPTI_LIB})
  # Runtime dependencies: libcupti + libc only. The static C++ runtime stays private
  # (--exclude-libs) so it cannot interpose on the host process's libstdc++.
  target_compile_options(magpie_cupti PRIVATE -fvisibility=hidden)
  target_link_options(magpie_cupti PRIVATE -static-libstdc++ -static-libgcc -Wl,--exclude-libs,ALL
                      -Wl,--as-needed -Wl,-z,defs
                      -Wl,--version-script=${PROJECT_SOURCE_DIR}/src/cupti/magpie_cupti.map)
  set_property(TARGET magpie_cupti APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/src/cupti/magpie_cupti.map)
  set_target_properties(magpie_cupti PROPERTIES OUTPUT_NAME magpie_cupti LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib
                        NO_SONAME ON)
  set(MAGPIE_HAVE_CUPTI ON)
else()
  message(STATUS "CUPTI not found: libmagpie_cupti.so is not built (CUDA timing falls back to harness events)")
endif()
