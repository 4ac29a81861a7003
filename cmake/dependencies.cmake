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

add_library(magpie_deps INTERFACE)
target_include_directories(magpie_deps SYSTEM INTERFACE ${MAGPIE_YAMLCPP_INCLUDE} ${MAGPIE_RAPIDJSON_INCLUDE})
target_link_libraries(magpie_deps INTERFACE nlohmann_json::nlohmann_json ${MAGPIE_YAMLCPP_STATIC}
                      ${MAGPIE_SQLITE_STATIC} ${MAGPIE_ZLIB_STATIC} Threads::Threads ${CMAKE_DL_LIBS} m)
target_compile_definitions(magpie_deps INTERFACE RAPIDJSON_HAS_STDSTRING=1)
