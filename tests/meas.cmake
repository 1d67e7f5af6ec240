# Tests of the measurement-file loader and the row selection (simio).
# Included from tests/CMakeLists.txt, which sets SIM_TEST_DATA and SIM_SHARED_DATA.
add_executable(test_meas ${CMAKE_CURRENT_LIST_DIR}/test_meas.c)
target_link_libraries(test_meas PRIVATE simio simcore)
target_compile_definitions(test_meas PRIVATE
  SIM_TEST_DATA="${SIM_TEST_DATA}" SIM_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
  SIM_SHARED_DATA="${SIM_SHARED_DATA}")
add_test(NAME test_meas COMMAND test_meas)
