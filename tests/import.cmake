# Tests of `llmstep hw import`: benchmark-output readers, fits and the profile round trip.
# Included from tests/CMakeLists.txt, which sets SIM_TEST_DATA and SIM_SHARED_DATA.
add_executable(test_import ${CMAKE_CURRENT_LIST_DIR}/test_import.c)
target_link_libraries(test_import PRIVATE simio simcore)
target_compile_definitions(test_import PRIVATE
  SIM_TEST_DATA="${SIM_TEST_DATA}" SIM_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  SIM_SHARED_DATA="${SIM_SHARED_DATA}")
add_test(NAME test_import COMMAND test_import)
