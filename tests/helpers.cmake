# Functions the tests/*.cmake files register their tests with. Included by each of them (once:
# include_guard); tests/CMakeLists.txt sets SIM_TEST_DATA and SIM_SHARED_DATA before.
include_guard(GLOBAL)
set(SIM_TESTS_DIR ${CMAKE_CURRENT_LIST_DIR})

# sim_unit_test(NAME LIBS lib... [SOURCES file...] [INCLUDES dir...]): the executable NAME
# from tests/NAME.c (and SOURCES), linked with LIBS, given the data paths as SIM_TEST_DATA,
# SIM_SOURCE_DIR and SIM_SHARED_DATA, and run by ctest as the test NAME.
function(sim_unit_test name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "LIBS;SOURCES;INCLUDES")
  add_executable(${name} ${SIM_TESTS_DIR}/${name}.c ${arg_SOURCES})
  target_include_directories(${name} PRIVATE ${arg_INCLUDES})
  target_link_libraries(${name} PRIVATE ${arg_LIBS})
  target_compile_definitions(${name} PRIVATE
    SIM_TEST_DATA="${SIM_TEST_DATA}" SIM_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    SIM_SHARED_DATA="${SIM_SHARED_DATA}")
  add_test(NAME ${name} COMMAND ${name})
endfunction()

# sim_script_test(NAME SCRIPT [SKIPPABLE] ARGS arg...): the test NAME running tests/SCRIPT
# with ARGS. SKIPPABLE: the script exits 77 (ctest SKIP_RETURN_CODE) when what it needs,
# ../shared/data, is absent.
function(sim_script_test name script)
  cmake_parse_arguments(PARSE_ARGV 2 arg "SKIPPABLE" "" "ARGS")
  add_test(NAME ${name} COMMAND ${SIM_TESTS_DIR}/${script} ${arg_ARGS})
  if(arg_SKIPPABLE)
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endfunction()
