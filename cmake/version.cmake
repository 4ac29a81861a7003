# MAGPIE_VERSION_STRING = "<project version>+<git short hash>[-dirty]" at configure time.
find_package(Git QUIET)
set(MAGPIE_GIT_HASH "unknown")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE MAGPIE_GIT_HASH
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _git_rc)
  if(NOT _git_rc EQUAL 0)
    set(MAGPIE_GIT_HASH "unknown")
  endif()
endif()
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/generated/magpie_generated)
file(WRITE ${PROJECT_BINARY_DIR}/generated/magpie_generated/version.h.in
"#pragma once\n#define MAGPIE_VERSION \"@PROJECT_VERSION@\"\n#define MAGPIE_GIT_COMMIT \"@MAGPIE_GIT_HASH@\"\n#define MAGPIE_SOURCE_DIR \"@PROJECT_SOURCE_DIR@\"\n")
configure_file(${PROJECT_BINARY_DIR}/generated/magpie_generated/version.h.in
               ${PROJECT_BINARY_DIR}/generated/magpie_generated/version.h @ONLY)
set(MAGPIE_VERSION_SOURCE "")
