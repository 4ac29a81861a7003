# Optional CUDA tooling built with the host compiler: the CUPTI activity injection library
# (libmagpie_cupti.so) that records every kernel launch of a child process. Needs cupti.h
# and libcupti.so at build time; it is loaded by the CUDA driver through
# CUDA_INJECTION64_PATH, so the magpie binary itself has no CUDA dependency.
set(MAGPIE_CUDA_ROOT "/usr/local/cuda" CACHE PATH "CUDA toolkit root for the CUPTI injection library")
find_path(MAGPIE_CUPTI_INCLUDE cupti.h
  PATHS ${MAGPIE_CUDA_ROOT}/include ${MAGPIE_CUDA_ROOT}/extras/CUPTI/include NO_DEFAULT_PATH)
find_library(MAGPIE_CUPTI_LIB NAMES cupti
  PATHS ${MAGPIE_CUDA_ROOT}/lib ${MAGPIE_CUDA_ROOT}/lib64 ${MAGPIE_CUDA_ROOT}/extras/CUPTI/lib64
        ${MAGPIE_CUDA_ROOT}/targets/x86_64-linux/lib NO_DEFAULT_PATH)
if(MAGPIE_CUPTI_INCLUDE AND MAGPIE_CUPTI_LIB AND EXISTS ${PROJECT_SOURCE_DIR}/src/cupti/magpie_cupti.cpp)
  message(STATUS "CUPTI found: building libmagpie_cupti.so (${MAGPIE_CUPTI_LIB})")
  add_library(magpie_cupti SHARED ${PROJECT_SOURCE_DIR}/src/cupti/magpie_cupti.cpp)
  target_include_directories(magpie_cupti PRIVATE ${MAGPIE_CUPTI_INCLUDE} ${MAGPIE_CUDA_ROOT}/include)
  target_link_libraries(magpie_cupti PRIVATE ${MAGPIE_CUPTI_LIB})
  target_link_options(magpie_cupti PRIVATE -static-libstdc++ -static-libgcc)
  set_target_properties(magpie_cupti PROPERTIES OUTPUT_NAME magpie_cupti LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)
  set(MAGPIE_HAVE_CUPTI ON)
else()
  message(STATUS "CUPTI not found: libmagpie_cupti.so is not built (CUDA timing falls back to harness events)")
endif()
