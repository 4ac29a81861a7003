# Debian 12 packages (installed by .ci/run / scripts/install-deps.sh). Everything but glibc
# is linked statically so the binary runs on other distributions with glibc >= 2.36.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Threads REQUIRED)

find_library(MAGPIE_YAMLCPP_STATIC NAMES libyaml-cpp.a REQUIRED)
find_path(MAGPIE_YAMLCPP_INCLUDE yaml-cpp/yaml.h REQUIRED)
find_library(MAGPIE_ZLIB_STATIC NAMES libz.a REQUIRED)
find_library(MAGPIE_SQLITE_STATIC NAMES libsqlite3.a REQUIRED)
find_path(MAGPIE_RAPIDJSON_INCLUDE rapidjson/reader.h REQUIRED)
find_path(MAGPIE_BOOST_INCLUDE boost/beast.hpp PATHS /usr/include REQUIRED)
find_library(MAGPIE_IBERTY_STATIC NAMES libiberty.a REQUIRED)  # libiberty-dev: C++ demangler
find_path(MAGPIE_IBERTY_INCLUDE libiberty/demangle.h REQUIRED)

# One interface target per third-party library, linked PRIVATE by the module that wraps it
# (its one adapter file), so no other module compiles against it. Only nlohmann-json is public:
# core/json.h exposes its value type.
add_library(magpie_dep_json INTERFACE)
target_link_libraries(magpie_dep_json INTERFACE nlohmann_json::nlohmann_json Threads::Threads ${CMAKE_DL_LIBS} m)
add_library(magpie_dep_yaml INTERFACE)
target_include_directories(magpie_dep_yaml SYSTEM INTERFACE ${MAGPIE_YAMLCPP_INCLUDE})
target_link_libraries(magpie_dep_yaml INTERFACE ${MAGPIE_YAMLCPP_STATIC})
add_library(magpie_dep_sqlite INTERFACE)
target_link_libraries(magpie_dep_sqlite INTERFACE ${MAGPIE_SQLITE_STATIC} Threads::Threads ${CMAKE_DL_LIBS} m)
add_library(magpie_dep_zlib INTERFACE)
target_link_libraries(magpie_dep_zlib INTERFACE ${MAGPIE_ZLIB_STATIC})
add_library(magpie_dep_rapidjson INTERFACE)
target_include_directories(magpie_dep_rapidjson SYSTEM INTERFACE ${MAGPIE_RAPIDJSON_INCLUDE})
target_compile_definitions(magpie_dep_rapidjson INTERFACE RAPIDJSON_HAS_STDSTRING=1)
add_library(magpie_dep_boost INTERFACE)
target_include_directories(magpie_dep_boost SYSTEM INTERFACE ${MAGPIE_BOOST_INCLUDE})
add_library(magpie_dep_iberty INTERFACE)
target_include_directories(magpie_dep_iberty SYSTEM INTERFACE ${MAGPIE_IBERTY_INCLUDE})
target_link_libraries(magpie_dep_iberty INTERFACE ${MAGPIE_IBERTY_STATIC})
